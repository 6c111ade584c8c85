package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/s3test"
	"github.com/example/mysql-operator/objstore"
)

// The real node's S3 server: versitygw on the host end of the node's
// network, where pods reach it as they reach the API server, with
// credentials generated for the cluster.

// startS3 starts versitygw on the node network's host address.
func (c *Cluster) startS3(ctx context.Context) error {
	dir := filepath.Join(c.Dir, "s3")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	s, err := s3test.Run(ctx, s3test.Options{Host: c.net.HostIP(), Dir: dir, Binary: filepath.Join(c.opts.Bin, "versitygw")})
	if err != nil {
		return err
	}
	c.S3 = s
	return nil
}

// stopS3 stops the S3 server, if any.
func (c *Cluster) stopS3() {
	if c.S3 != nil {
		c.S3.Stop()
		c.S3 = nil
	}
}

// BackupStorage creates bucket on the cluster's S3 server and a Secret of
// its credentials, named secret, in ns, and returns the storage of prefix
// in the bucket as a MySQL's spec names it.
func (c *Cluster) BackupStorage(ctx context.Context, ns, secret, bucket, prefix string) (databasev1.BackupStorage, error) {
	if c.S3 == nil {
		return databasev1.BackupStorage{}, fmt.Errorf("the cluster has no S3 server: it needs a real node")
	}
	if _, err := c.S3.CreateBucket(ctx, bucket, prefix); err != nil {
		return databasev1.BackupStorage{}, err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: ns}, StringData: map[string]string{
		objstore.AccessKeyIDFile: c.S3.AccessKeyID, objstore.SecretAccessKeyFile: c.S3.SecretAccessKey}}
	if err := c.Client.Create(ctx, sec); err != nil {
		return databasev1.BackupStorage{}, fmt.Errorf("create Secret %s: %w", secret, err)
	}
	return databasev1.BackupStorage{S3: databasev1.S3Storage{Endpoint: c.S3.Endpoint, Bucket: bucket, Prefix: prefix,
		Region: "us-east-1", PathStyle: true, CredentialsSecretRef: databasev1.LocalSecretReference{Name: secret}}}, nil
}
