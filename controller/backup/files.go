package backup

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/objstore"
)

// openStore returns the store of a storage, with the credentials of its
// Secrets in ns. They are read from the API server, not the cache, which
// keeps only the operator's own Secrets' values.
func openStore(ctx context.Context, r client.Reader, ns string, s databasev1.BackupStorage) (*objstore.Store, error) {
	cfg := children.StorageConfig(s)
	creds := &corev1.Secret{}
	name := s.S3.CredentialsSecretRef.Name
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, creds); err != nil {
		return nil, fmt.Errorf("read the storage credentials: Secret %s: %w", name, err)
	}
	cfg.AccessKeyID = strings.TrimSpace(string(creds.Data[objstore.AccessKeyIDFile]))
	cfg.SecretAccessKey = strings.TrimSpace(string(creds.Data[objstore.SecretAccessKeyFile]))
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return nil, fmt.Errorf("Secret %s lacks %s or %s", name, objstore.AccessKeyIDFile, objstore.SecretAccessKeyFile)
	}
	if ca := s.S3.CASecretRef; ca != nil {
		sec := &corev1.Secret{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ca.Name}, sec); err != nil {
			return nil, fmt.Errorf("read the storage CA: Secret %s: %w", ca.Name, err)
		}
		key := ca.Key
		if key == "" {
			key = objstore.CAFile
		}
		cfg.CA = sec.Data[key]
	}
	return objstore.New(cfg)
}

// deleteFiles deletes every file of backup name, the parts of an upload
// cut off included.
func deleteFiles(ctx context.Context, s *objstore.Store, name string) error {
	if err := s.AbortIncomplete(ctx, backup.DataKey(name)); err != nil {
		return err
	}
	objs, err := s.List(ctx, backup.BackupsDir+name+"/")
	if err != nil {
		return err
	}
	// The manifest first: a backup without it is incomplete, never listed.
	names := []string{backup.ManifestKey(name)}
	for _, o := range objs {
		if o.Name != backup.ManifestKey(name) {
			names = append(names, o.Name)
		}
	}
	return s.Delete(ctx, names...)
}
