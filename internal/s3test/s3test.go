// Package s3test runs versitygw (Apache-2.0), a real S3 server whose posix
// backend keeps each bucket as a plain directory, for the backup tests and
// the local cluster: bin/versitygw, built by `make s3`. Its credentials are
// generated per server and passed in its environment, never its command line.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/example/mysql-operator/internal/testenv"
	"github.com/example/mysql-operator/objstore"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is its URL, http://host:port.
	Endpoint string
	// AccessKeyID and SecretAccessKey are its root user's credentials.
	AccessKeyID, SecretAccessKey string
	// Dir holds the buckets, one directory each.
	Dir string

	cmd       *exec.Cmd
	done      chan struct{}
	accessLog string
}

// Requests counts the requests the access log holds (Options.AccessLog).
func (s *Server) Requests() (int, error) {
	data, err := os.ReadFile(s.accessLog)
	if err != nil {
		return 0, err
	}
	return strings.Count(string(data), "\n"), nil
}

// Options say where a server listens and keeps its files.
type Options struct {
	// Host is the address to listen on; 127.0.0.1 when empty.
	Host string
	// Port is the port; a free one when 0.
	Port int
	// Dir is the directory of the buckets and the log.
	Dir string
	// Binary is versitygw; bin/versitygw of the repository when empty.
	Binary string
	// AccessLog logs every request to access.log in Dir (Server.Requests).
	AccessLog bool
}

// Run starts a server; Stop stops it. It fails when the binary is missing:
// run `make s3`.
func Run(ctx context.Context, o Options) (*Server, error) {
	if o.Binary == "" {
		bin, err := testenv.BinDir()
		if err != nil {
			return nil, err
		}
		o.Binary = filepath.Join(bin, "versitygw")
	}
	if _, err := os.Stat(o.Binary); err != nil {
		return nil, fmt.Errorf("versitygw not found (run `make s3`): %w", err)
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	s := &Server{AccessKeyID: "vgw" + token(8), SecretAccessKey: token(20), Dir: filepath.Join(o.Dir, "buckets")}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, err
	}
	var err error
	for range 5 { // a port handed out may be taken by another test binary
		port := o.Port
		if port == 0 {
			if port, err = testenv.FreePort(); err != nil {
				return nil, err
			}
		}
		s.Endpoint = "http://" + net.JoinHostPort(o.Host, strconv.Itoa(port))
		if err = s.start(ctx, o, port); err == nil || o.Port != 0 {
			break
		}
	}
	return s, err
}

// start launches the binary on port and waits until it answers.
func (s *Server) start(ctx context.Context, o Options, port int) error {
	args := []string{"--port", net.JoinHostPort(o.Host, strconv.Itoa(port)), "--quiet"}
	if o.AccessLog {
		s.accessLog = filepath.Join(o.Dir, "access.log")
		args = append(args, "--access-log", s.accessLog)
	}
	args = append(args, "posix")
	if !userXattrs(s.Dir) {
		sidecar := filepath.Join(o.Dir, "sidecar")
		if err := os.MkdirAll(sidecar, 0o700); err != nil {
			return err
		}
		args = append(args, "--sidecar", sidecar)
	}
	log, err := os.OpenFile(filepath.Join(o.Dir, "versitygw.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(o.Binary, append(args, s.Dir)...)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKeyID, "ROOT_SECRET_ACCESS_KEY="+s.SecretAccessKey)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(s.done) }()
	return s.waitReady(ctx)
}

// waitReady polls until the server lists its buckets with its credentials:
// another process on the port would refuse them.
func (s *Server) waitReady(ctx context.Context) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err = c.ListBuckets(ctx); err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("versitygw exited (see %s): %w", filepath.Join(filepath.Dir(s.Dir), "versitygw.log"), err)
		case <-ctx.Done():
			s.Stop()
			return fmt.Errorf("versitygw at %s did not answer: %w", s.Endpoint, err)
		case <-tick.C:
		}
	}
}

// Stop stops the server and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// client is a root client of the server.
func (s *Server) client() (*minio.Client, error) {
	return minio.New(s.Endpoint[len("http://"):], &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKeyID, s.SecretAccessKey, ""), BucketLookup: minio.BucketLookupPath})
}

// CreateBucket creates a bucket and returns the storage config of prefix
// in it, with the root credentials.
func (s *Server) CreateBucket(ctx context.Context, bucket, prefix string) (objstore.Config, error) {
	c, err := s.client()
	if err != nil {
		return objstore.Config{}, err
	}
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		return objstore.Config{}, fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	return s.Config(bucket, prefix), nil
}

// Config is the storage config of prefix in bucket, which may not exist.
func (s *Server) Config(bucket, prefix string) objstore.Config {
	return objstore.Config{Endpoint: s.Endpoint, Bucket: bucket, Prefix: prefix, PathStyle: true,
		Region: "us-east-1", AccessKeyID: s.AccessKeyID, SecretAccessKey: s.SecretAccessKey}
}

// Start runs a server on 127.0.0.1 for one test, stopped when it ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Run(context.Background(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Bucket creates a bucket for one test and returns its config at prefix.
func (s *Server) Bucket(t testing.TB, bucket, prefix string) objstore.Config {
	t.Helper()
	cfg, err := s.CreateBucket(context.Background(), bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// userXattrs says whether dir's filesystem takes user extended attributes,
// where the posix backend keeps an object's metadata by default.
func userXattrs(dir string) bool {
	probe := filepath.Join(dir, ".xattr-probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return false
	}
	defer os.Remove(probe)
	return syscall.Setxattr(probe, "user.probe", []byte("1"), 0) == nil
}

// token returns n random bytes in hex.
func token(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
