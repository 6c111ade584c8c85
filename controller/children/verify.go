package children

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// The scratch pod that proves a backup restorable (spec.backup.verify):
// the agent restores the backup into an empty volume, starts a server on
// it with no network, checks its GTID position, and writes what it found
// as the container's termination message. It runs where the MySQL's pods
// may, in the database image, with the same restrictions, and is owned by
// the MySQLBackup.

// verifyMemory bounds the scratch pod: the server's buffers, the prepare's
// 256M and the download's parts.
const verifyMemory = "1Gi"

// VerifyPodName is the name of backup b's scratch pod.
func VerifyPodName(b *databasev1.MySQLBackup) string { return b.Name + "-verify" }

// VerifyPod returns the scratch pod that verifies backup b of m.
func VerifyPod(m *databasev1.MySQL, b *databasev1.MySQLBackup, agentImage string) *corev1ac.PodApplyConfiguration {
	owner := metav1ac.OwnerReference().WithAPIVersion(databasev1.GroupVersion.String()).WithKind(databasev1.MySQLBackupKind).
		WithName(b.Name).WithUID(b.UID).WithController(true).WithBlockOwnerDeletion(true)
	c := corev1ac.Container().WithName("verify").WithImage(Image(m)).
		WithCommand(agentCommand("verify", "--backup="+b.Name, "--data-dir="+dataDir, "--socket="+socketPath,
			"--pod-conf="+podCnfPath, "--server-config="+myCnfPath, "--backup-dir="+backupMountPath)...).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithResources(corev1ac.ResourceRequirements().WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(verifyMemory)})).
		WithSecurityContext(restricted()).
		WithVolumeMounts(mount(DataVolume, dataMountPath, false), mount(configVolume, configMountPath, true),
			mount(runVolume, runMountPath, false), mount(tmpVolume, tmpMountPath, false), mount(agentVolume, agentMountPath, true),
			mount(backupVolume, backupMountPath, true))
	empty := func(name string) *corev1ac.VolumeApplyConfiguration {
		return corev1ac.Volume().WithName(name).WithEmptyDir(corev1ac.EmptyDirVolumeSource())
	}
	spec := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithAutomountServiceAccountToken(false).
		WithEnableServiceLinks(false).
		WithSecurityContext(corev1ac.PodSecurityContext().WithRunAsNonRoot(true).WithRunAsUser(mysqlUID).WithRunAsGroup(mysqlUID).
			WithFSGroup(mysqlUID).WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithInitContainers(installAgentContainer(agentImage)).
		WithContainers(c).
		WithVolumes(empty(DataVolume), empty(runVolume), empty(tmpVolume), empty(agentVolume),
			corev1ac.Volume().WithName(configVolume).WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(ConfigMapName(m))),
			storageVolume(m, backupVolume, backup.ConfigFile, m.Spec.Backup.Storage))
	if len(m.Spec.NodeSelector) > 0 {
		spec.WithNodeSelector(m.Spec.NodeSelector)
	}
	for i := range m.Spec.Tolerations {
		spec.WithTolerations(toleration(m.Spec.Tolerations[i]))
	}
	return corev1ac.Pod(VerifyPodName(b), b.Namespace).
		WithLabels(map[string]string{vocabulary.LabelManagedBy: vocabulary.FieldManager, vocabulary.LabelBackupOf: m.Name}).
		WithOwnerReferences(owner).
		WithSpec(spec)
}
