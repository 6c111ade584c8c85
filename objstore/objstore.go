// Package objstore is the operator's one client of S3-compatible object
// storage, where backups and archived binary logs live: minio-go, with a
// part size stated so that a stream of unknown length is uploaded with a
// memory bound of a few parts (minio-go's default would buffer about
// 537 MiB), every key under the storage's prefix, and errors said in the
// words a DBA acts on (Describe).
package objstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Config is where a store is and how to sign in.
type Config struct {
	// Endpoint is the URL of the S3 service: https://host[:port], or
	// http:// for a service without TLS.
	Endpoint string `json:"endpoint"`
	// Bucket is the bucket, which must exist.
	Bucket string `json:"bucket"`
	// Prefix is put before every key, without a trailing slash; empty
	// keeps keys at the bucket's root.
	Prefix string `json:"prefix,omitempty"`
	// Region is the bucket's region; empty asks the service.
	Region string `json:"region,omitempty"`
	// PathStyle addresses the bucket as a path (host/bucket/key) rather
	// than a host name (bucket.host/key), as most services other than
	// AWS need.
	PathStyle bool `json:"pathStyle,omitempty"`
	// AccessKeyID and SecretAccessKey sign the requests; they are read
	// from files, never marshalled.
	AccessKeyID     string `json:"-"`
	SecretAccessKey string `json:"-"`
	// CA is a PEM bundle that the service's certificate must chain to,
	// beside the system's roots; empty trusts the system's only.
	CA []byte `json:"-"`
}

// Location is where the config's prefix is, for status and messages:
// s3://bucket/prefix.
func (c Config) Location() string {
	return "s3://" + path.Join(c.Bucket, c.Prefix)
}

// PartSize is the size of one part of a multipart upload: an upload of a
// stream buffers uploadThreads parts, and the largest object is 10,000
// parts (312 GiB compressed).
const PartSize = 32 << 20

// uploadThreads is how many parts an upload of a stream fills and sends at
// once: one is sent while the next fills.
const uploadThreads = 2

// Store is a bucket and prefix of an S3 service.
type Store struct {
	client *minio.Client
	cfg    Config
}

// New returns a store of cfg. It sends nothing: errors come with the first
// request.
func New(cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want http(s)://host[:port]", cfg.Endpoint)
	}
	if cfg.Bucket == "" {
		return nil, errors.New("no bucket")
	}
	transport, err := newTransport(cfg.CA)
	if err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupDNS
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		Secure:       u.Scheme == "https",
		Transport:    transport,
		Region:       cfg.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 client of %s: %w", cfg.Endpoint, err)
	}
	return &Store{client: client, cfg: cfg}, nil
}

// newTransport is the default transport, trusting ca beside the system's
// roots, with a bound on connecting and on waiting for an answer's
// headers (a body may take its time).
func newTransport(ca []byte) (*http.Transport, error) {
	t, err := minio.DefaultTransport(true)
	if err != nil {
		return nil, err
	}
	t.ResponseHeaderTimeout = time.Minute
	if len(ca) == 0 {
		return t, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the CA bundle holds no PEM certificate")
	}
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}

// Config returns the store's config.
func (s *Store) Config() Config { return s.cfg }

// key is the object key of name under the prefix.
func (s *Store) key(name string) string {
	if s.cfg.Prefix == "" {
		return name
	}
	return s.cfg.Prefix + "/" + name
}

// URL is the s3:// address of name, for status and messages.
func (s *Store) URL(name string) string {
	return "s3://" + s.cfg.Bucket + "/" + s.key(name)
}

// Object is one stored object.
type Object struct {
	// Name is the key without the store's prefix.
	Name string
	// Size is its size in bytes.
	Size int64
	// Modified is when it was last written.
	Modified time.Time
}

// Check says whether the bucket can be reached and listed with the
// credentials: the first thing a backup or a restore does, so that a
// mistake in the storage is said before anything else happens.
func (s *Store) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		return s.describe("check the bucket", err)
	}
	if !ok {
		return &Error{Op: "check the bucket", Kind: NoBucket, Detail: fmt.Sprintf("bucket %q does not exist at %s", s.cfg.Bucket, s.cfg.Endpoint)}
	}
	return nil
}

// Put stores r as name, size bytes long or -1 when unknown; a stream is
// sent in parts of PartSize. An object is visible only once whole: a Put
// that fails or whose context ends leaves no object (the service drops an
// incomplete multipart upload; see AbortIncomplete).
func (s *Store) Put(ctx context.Context, name string, r io.Reader, size int64) error {
	_, err := s.client.PutObject(ctx, s.cfg.Bucket, s.key(name), r, size, minio.PutObjectOptions{
		ContentType:           "application/octet-stream",
		PartSize:              PartSize,
		NumThreads:            uploadThreads,
		ConcurrentStreamParts: size < 0,
		// The requests are signed without a hash of their body (a second
		// SHA-256 pass over every byte): the manifest's SHA-256 of each
		// file, checked on restore, covers it from end to end.
		DisableContentSha256: true,
	})
	if err != nil {
		return s.describe("upload "+name, err)
	}
	return nil
}

// Get opens name for reading.
func (s *Store) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, s.key(name), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.describe("download "+name, err)
	}
	// GetObject sends nothing until the first read: Stat asks now, so
	// that a missing object is said here.
	if _, err := obj.Stat(); err != nil {
		obj.Close()
		return nil, s.describe("download "+name, err)
	}
	return readCloser{obj: obj, s: s, name: name}, nil
}

// readCloser describes the errors of a download's reads.
type readCloser struct {
	obj  *minio.Object
	s    *Store
	name string
}

func (r readCloser) Read(p []byte) (int, error) {
	n, err := r.obj.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = r.s.describe("download "+r.name, err)
	}
	return n, err
}

func (r readCloser) Close() error { return r.obj.Close() }

// List returns the objects whose names start with prefix, in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	full := s.key(prefix)
	for o := range s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: full, Recursive: true}) {
		if o.Err != nil {
			return nil, s.describe("list "+prefix, o.Err)
		}
		name := o.Key
		if s.cfg.Prefix != "" {
			name = strings.TrimPrefix(name, s.cfg.Prefix+"/")
		}
		out = append(out, Object{Name: name, Size: o.Size, Modified: o.LastModified})
	}
	return out, nil
}

// Delete removes the named objects; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, names ...string) error {
	for _, name := range names {
		if err := s.client.RemoveObject(ctx, s.cfg.Bucket, s.key(name), minio.RemoveObjectOptions{}); err != nil {
			if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
				continue
			}
			return s.describe("delete "+name, err)
		}
	}
	return nil
}

// AbortIncomplete drops the incomplete multipart uploads of name: the parts
// an upload cut off (its process killed) left behind.
func (s *Store) AbortIncomplete(ctx context.Context, name string) error {
	if err := s.client.RemoveIncompleteUpload(ctx, s.cfg.Bucket, s.key(name)); err != nil {
		return s.describe("abort the incomplete upload of "+name, err)
	}
	return nil
}
