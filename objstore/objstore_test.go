package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/example/mysql-operator/internal/s3test"
	"github.com/example/mysql-operator/objstore"
)

// TestStore stores, lists, reads and deletes objects on a real S3 server
// (versitygw), a stream of unknown length in several parts among them.
func TestStore(t *testing.T) {
	ctx := context.Background()
	s3 := s3test.Start(t)
	s, err := objstore.New(s3.Bucket(t, "bk1", "team/db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), (objstore.PartSize*2+1000)/16)
	if err := s.Put(ctx, "backups/x/data", bytes.NewReader(big), -1); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "backups/x/manifest.json", strings.NewReader("{}"), 2); err != nil {
		t.Fatal(err)
	}
	objs, err := s.List(ctx, "backups/")
	if err != nil || len(objs) != 2 || objs[0].Name != "backups/x/data" || objs[0].Size != int64(len(big)) {
		t.Fatalf("list: %+v, %v", objs, err)
	}
	r, err := s.Get(ctx, "backups/x/data")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(big))
	}
	if err := s.Delete(ctx, "backups/x/data", "backups/x/manifest.json", "backups/x/never"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "backups/x/data"); objstore.KindOf(err) != objstore.NotFound ||
		!strings.Contains(err.Error(), "download backups/x/data: no such object in s3://bk1/team/db") {
		t.Errorf("a deleted object: %v", err)
	}
}

// TestStreamCutShort: an upload whose stream fails leaves no object.
func TestStreamCutShort(t *testing.T) {
	ctx := context.Background()
	s, err := objstore.New(s3test.Start(t).Bucket(t, "bk1", ""))
	if err != nil {
		t.Fatal(err)
	}
	cut := io.MultiReader(bytes.NewReader(make([]byte, objstore.PartSize+10)), failing{})
	if err := s.Put(ctx, "half", cut, -1); err == nil {
		t.Fatal("an upload of a stream that failed succeeded")
	}
	if objs, err := s.List(ctx, ""); err != nil || len(objs) != 0 {
		t.Errorf("after a failed upload: %+v, %v; want no object", objs, err)
	}
	if err := s.AbortIncomplete(ctx, "half"); err != nil {
		t.Errorf("abort the incomplete upload: %v", err)
	}
}

// failing is a stream that breaks.
type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("the backup program died") }

// TestErrorsSayWhat: each mistake in a storage is said in its terms.
func TestErrorsSayWhat(t *testing.T) {
	ctx := context.Background()
	s3 := s3test.Start(t)
	good := s3.Bucket(t, "bk1", "")
	for _, tt := range []struct {
		name string
		edit func(*objstore.Config)
		kind objstore.Kind
		says string
	}{
		{"no bucket", func(c *objstore.Config) { c.Bucket = "missing" }, objstore.NoBucket, `bucket "missing" does not exist at ` + good.Endpoint},
		{"wrong secret", func(c *objstore.Config) { c.SecretAccessKey = "wrong" }, objstore.Denied, "refused the credentials: SignatureDoesNotMatch"},
		{"unknown key", func(c *objstore.Config) { c.AccessKeyID = "nobody" }, objstore.Denied, "refused the credentials"},
		{"nobody listening", func(c *objstore.Config) { c.Endpoint = "http://127.0.0.1:1" }, objstore.Unreachable, "cannot reach http://127.0.0.1:1"},
	} {
		cfg := good
		tt.edit(&cfg)
		s, err := objstore.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Put(ctx, "x", strings.NewReader("x"), 1)
		if tt.name == "no bucket" {
			err = s.Check(ctx)
		}
		if objstore.KindOf(err) != tt.kind || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v (%s), want %s saying %q", tt.name, err, objstore.KindOf(err), tt.kind, tt.says)
		}
		if err != nil && strings.Contains(err.Error(), cfg.SecretAccessKey) {
			t.Errorf("%s: the error holds the secret key", tt.name)
		}
	}
	if _, err := objstore.New(objstore.Config{Endpoint: "s3.example.com", Bucket: "b"}); err == nil {
		t.Error("an endpoint without a scheme was taken")
	}
}
