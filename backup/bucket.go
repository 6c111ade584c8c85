package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/example/mysql-operator/objstore"
)

// The bucket's small files, read and written the same way by the agent and
// the operator.

// maxSmallFile bounds the manifests and indexes read from a bucket.
const maxSmallFile = 1 << 20

// catalogReads bounds the manifests and indexes read at once.
const catalogReads = 8

// ReadJSON reads the small JSON object name into v.
func ReadJSON(ctx context.Context, s *objstore.Store, name string, v any) error {
	r, err := s.Get(ctx, name)
	if err != nil {
		return err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxSmallFile))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", s.URL(name), err)
	}
	return nil
}

// PutJSON writes v as the small object name.
func PutJSON(ctx context.Context, s *objstore.Store, name string, v any) error {
	data := Marshal(v)
	return s.Put(ctx, name, bytes.NewReader(data), int64(len(data)))
}

// Claim makes the prefix owner's: it writes cluster.json when the prefix
// has none, and refuses a prefix another MySQL owns, so that two MySQLs
// never mix their histories.
func Claim(ctx context.Context, s *objstore.Store, owner Owner) error {
	var have Owner
	err := ReadJSON(ctx, s, OwnerKey, &have)
	switch {
	case objstore.KindOf(err) == objstore.NotFound:
		return PutJSON(ctx, s, OwnerKey, owner)
	case err != nil:
		return err
	case have.UID != owner.UID:
		return fmt.Errorf("%s holds the backups of MySQL %s: give this MySQL another prefix, or delete %s to hand the prefix over",
			s.Config().Location(), have, s.URL(OwnerKey))
	}
	return nil
}

// Catalog reads what a prefix holds: its complete backups (those with a
// manifest) and the indexes of its archived binary logs.
func Catalog(ctx context.Context, s *objstore.Store) ([]Manifest, []Segment, error) {
	objs, err := s.List(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	var manifests, indexes []string
	for _, o := range objs {
		if _, ok := ParseManifestKey(o.Name); ok {
			manifests = append(manifests, o.Name)
		} else if _, _, ok := ParseIndexKey(o.Name); ok {
			indexes = append(indexes, o.Name)
		}
	}
	backups, err := readAll[Manifest](ctx, s, manifests)
	if err != nil {
		return nil, nil, err
	}
	segments, err := readAll[Segment](ctx, s, indexes)
	return backups, segments, err
}

// readAll reads the JSON objects names, a few at once.
func readAll[T any](ctx context.Context, s *objstore.Store, names []string) ([]T, error) {
	out := make([]T, len(names)) // each reader writes its own element
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(catalogReads)
	for i, name := range names {
		g.Go(func() error {
			return ReadJSON(ctx, s, name, &out[i])
		})
	}
	return out, g.Wait()
}
