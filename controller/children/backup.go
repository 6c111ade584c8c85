package children

import (
	"time"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/objstore"
)

// The backup and restore configs of the pods: the MySQL's ConfigMap holds
// them (backup.json, restore.json) beside my.cnf, outside the config hash,
// so that changing the storage or the archive's delay reaches the agents
// (the kubelet refreshes a mounted ConfigMap within a minute) without
// restarting a server. Each is mounted with its credentials as one
// directory: the agent's, for backups and the archive, and the init
// container's, for a restore.
const (
	backupVolume     = "backup"
	backupMountPath  = "/etc/mysql-operator/backup"
	restoreVolume    = "restore"
	restoreMountPath = "/etc/mysql-operator/restore"
	// defaultArchiveDelay is the archive's delay when binlogArchive
	// leaves it out (the CRD's default).
	defaultArchiveDelay = time.Minute
)

// StorageConfig is the objstore config of a storage, without credentials.
func StorageConfig(s databasev1.BackupStorage) objstore.Config {
	return objstore.Config{Endpoint: s.S3.Endpoint, Bucket: s.S3.Bucket, Prefix: s.S3.Prefix, Region: s.S3.Region,
		PathStyle: s.S3.PathStyle}
}

// BackupConfig is the agents' backup.json: the storage, the MySQL that
// owns its prefix, the archive's delay and the rate limit.
func BackupConfig(m *databasev1.MySQL) backup.PodConfig {
	p := m.Spec.Backup
	cfg := backup.PodConfig{Storage: StorageConfig(p.Storage),
		Owner: backup.Owner{Namespace: m.Namespace, Name: m.Name, UID: string(m.UID)}}
	if p.BinlogArchive != nil {
		cfg.ArchiveMaxDelay = backup.Duration(defaultArchiveDelay)
		if p.BinlogArchive.MaxDelay != nil {
			cfg.ArchiveMaxDelay = backup.Duration(p.BinlogArchive.MaxDelay.Duration)
		}
	}
	if p.RateLimit != nil {
		cfg.RateLimit = p.RateLimit.Value()
	}
	return cfg
}

// RestoreConfig is instance 0's restore.json; Done once the status says
// the restore completed, so that an instance 0 that loses its volume
// later is seeded, not restored again.
func RestoreConfig(m *databasev1.MySQL) backup.RestoreConfig {
	r := m.Spec.Restore
	cfg := backup.RestoreConfig{Storage: StorageConfig(r.Storage), Done: m.Status.Restore != nil,
		Target: backup.Target{Backup: r.Backup, GTID: r.GTID}}
	if r.PointInTime != nil {
		t := r.PointInTime.UTC()
		cfg.Target.Time = &t
	}
	return cfg
}

// configData is the ConfigMap's data: my.cnf, and the backup and restore
// configs the spec asks for.
func configData(m *databasev1.MySQL) map[string]string {
	data := map[string]string{configKey: MyCnf(m)}
	if m.Spec.Backup != nil {
		data[backup.ConfigFile] = string(backup.Marshal(BackupConfig(m)))
	}
	if m.Spec.Restore != nil {
		data[backup.RestoreFile] = string(backup.Marshal(RestoreConfig(m)))
	}
	return data
}

// storageVolume is a directory of a config of the ConfigMap (key) and the
// storage's credentials and CA.
func storageVolume(m *databasev1.MySQL, name, key string, s databasev1.BackupStorage) *corev1ac.VolumeApplyConfiguration {
	item := func(key, path string) *corev1ac.KeyToPathApplyConfiguration {
		return corev1ac.KeyToPath().WithKey(key).WithPath(path)
	}
	sources := []*corev1ac.VolumeProjectionApplyConfiguration{
		corev1ac.VolumeProjection().WithConfigMap(corev1ac.ConfigMapProjection().WithName(ConfigMapName(m)).WithItems(item(key, key))),
		corev1ac.VolumeProjection().WithSecret(corev1ac.SecretProjection().WithName(s.S3.CredentialsSecretRef.Name).
			WithItems(item(objstore.AccessKeyIDFile, objstore.AccessKeyIDFile), item(objstore.SecretAccessKeyFile, objstore.SecretAccessKeyFile))),
	}
	if ca := s.S3.CASecretRef; ca != nil {
		key := ca.Key
		if key == "" {
			key = "ca.crt"
		}
		sources = append(sources, corev1ac.VolumeProjection().WithSecret(corev1ac.SecretProjection().WithName(ca.Name).
			WithItems(item(key, objstore.CAFile))))
	}
	return corev1ac.Volume().WithName(name).WithProjected(corev1ac.ProjectedVolumeSource().WithDefaultMode(0o440).WithSources(sources...))
}

// storageVolumes are the pod's backup and restore directories.
func storageVolumes(m *databasev1.MySQL) []*corev1ac.VolumeApplyConfiguration {
	var out []*corev1ac.VolumeApplyConfiguration
	if m.Spec.Backup != nil {
		out = append(out, storageVolume(m, backupVolume, backup.ConfigFile, m.Spec.Backup.Storage))
	}
	if m.Spec.Restore != nil {
		out = append(out, storageVolume(m, restoreVolume, backup.RestoreFile, m.Spec.Restore.Storage))
	}
	return out
}
