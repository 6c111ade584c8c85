// Package gitserver serves git repositories over smart HTTP on loopback,
// through git's own http-backend run as a CGI program, so that a GitOps
// controller can clone and fetch them as it would from a forge. A test
// commits to a repository with the git command line and the controller
// sees the new revision at its next fetch.
package gitserver

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Branch is the branch every repository of the server has.
const Branch = "main"

// Server serves the bare repositories under a directory.
type Server struct {
	// URL is the base URL of the server; a repository name follows it.
	URL string

	root string
	srv  *http.Server
	done chan error
}

// Start serves the bare repositories under root on a free port of
// 127.0.0.1. Clients may fetch, not push: commits are made with Repo.
func Start(root string) (*Server, error) {
	backend, err := httpBackend()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	handler := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	s := &Server{URL: "http://" + ln.Addr().String(), root: root, done: make(chan error, 1),
		srv: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// httpBackend returns the path of git's http-backend program.
func httpBackend() (string, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return "", fmt.Errorf("git --exec-path (is git installed?): %w", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("git http-backend: %w", err)
	}
	return path, nil
}

// Close stops serving.
func (s *Server) Close() error {
	if err := s.srv.Close(); err != nil {
		return fmt.Errorf("close git server: %w", err)
	}
	if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("git server: %w", err)
	}
	return nil
}

// Repo is a bare repository of the server and a work tree whose commits
// are pushed to it.
type Repo struct {
	// URL is where clients fetch the repository.
	URL string
	// Dir is the work tree: change files there, then Commit.
	Dir string
}

// NewRepo makes the bare repository name.git with branch Branch, and a
// work tree under workRoot holding a copy of each of the seed directories
// (their paths relative to seedRoot kept), committed once.
func (s *Server) NewRepo(name, workRoot, seedRoot string, seed ...string) (*Repo, error) {
	bare := filepath.Join(s.root, name+".git")
	r := &Repo{URL: s.URL + "/" + name + ".git", Dir: filepath.Join(workRoot, name)}
	if err := git(s.root, "init", "--quiet", "--bare", "--initial-branch="+Branch, bare); err != nil {
		return nil, err
	}
	if err := git(workRoot, "init", "--quiet", "--initial-branch="+Branch, r.Dir); err != nil {
		return nil, err
	}
	if err := git(r.Dir, "remote", "add", "origin", bare); err != nil {
		return nil, err
	}
	for _, d := range seed {
		if err := os.CopyFS(filepath.Join(r.Dir, d), os.DirFS(filepath.Join(seedRoot, d))); err != nil {
			return nil, fmt.Errorf("copy %s: %w", d, err)
		}
	}
	if _, err := r.Commit("Seed from the repository under test"); err != nil {
		return nil, err
	}
	return r, nil
}

// Commit commits every change of the work tree with message and pushes it;
// it returns the new commit's id.
func (r *Repo) Commit(message string) (string, error) {
	if err := git(r.Dir, "add", "--all"); err != nil {
		return "", err
	}
	if err := git(r.Dir, "commit", "--quiet", "--allow-empty", "-m", message); err != nil {
		return "", err
	}
	if err := git(r.Dir, "push", "--quiet", "origin", Branch); err != nil {
		return "", err
	}
	return r.Head()
}

// Head returns the id of the last commit.
func (r *Repo) Head() (string, error) {
	out, err := gitOutput(r.Dir, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// WriteFile writes a file of the work tree, path relative to it.
func (r *Repo) WriteFile(path string, data []byte) error {
	if err := os.WriteFile(filepath.Join(r.Dir, path), data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// RemoveFile removes a file of the work tree, path relative to it.
func (r *Repo) RemoveFile(path string) error {
	if err := os.Remove(filepath.Join(r.Dir, path)); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// ReadFile reads a file of the work tree, path relative to it.
func (r *Repo) ReadFile(path string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(r.Dir, path))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// git runs a git command in dir, apart from the user's and the system's
// git configuration, with a fixed author.
func git(dir string, args ...string) error {
	_, err := gitOutput(dir, args...)
	return err
}

// gitOutput runs a git command like git and returns its standard output.
func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
