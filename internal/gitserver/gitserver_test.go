package gitserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCloneAndFetch clones a seeded repository over smart HTTP, as a GitOps
// controller does, and fetches a later commit.
func TestCloneAndFetch(t *testing.T) {
	seed := t.TempDir()
	if err := os.MkdirAll(filepath.Join(seed, "tree", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seed, "tree", "sub", "a.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}()
	repo, err := srv.NewRepo("r", t.TempDir(), seed, "tree")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(repo.URL, "http://127.0.0.1:") {
		t.Errorf("URL %s, want one on loopback", repo.URL)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if _, err := gitOutput(filepath.Dir(clone), "clone", "--quiet", "--branch", Branch, repo.URL, clone); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(clone, "tree", "sub", "a.yaml")); err != nil || string(data) != "a: 1\n" {
		t.Fatalf("cloned file: %q (%v)", data, err)
	}
	if err := repo.WriteFile("tree/sub/a.yaml", []byte("a: 2\n")); err != nil {
		t.Fatal(err)
	}
	sha, err := repo.Commit("change a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitOutput(clone, "pull", "--quiet", "--ff-only"); err != nil {
		t.Fatal(err)
	}
	if head, err := gitOutput(clone, "rev-parse", "HEAD"); err != nil || strings.TrimSpace(head) != sha {
		t.Errorf("fetched head %q (%v), want %s", head, err, sha)
	}
}
