package children

import (
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/example/mysql-operator/agent"
	databasev1 "github.com/example/mysql-operator/api/v1"
)

// The database pod: the operator starts the server itself, as moco does,
// rather than rely on an image's entrypoint, so the same pod works with
// the official mysql and mariadb images and any image with the engine's
// binaries. An init container copies the agent (cmd/agent) from the
// operator's image into a shared volume; a second one, in the database
// image, initialises a new data directory with the operator's accounts;
// the server runs with the operator's my.cnf; the agent, beside it,
// answers the kubelet's probes. Every container is non-root, with a
// read-only root filesystem and no capabilities.

// Agent is what the pods' agent gets from the operator rather than from
// the MySQL's spec.
type Agent struct {
	// Image is the image the agent is copied from.
	Image string
	// FenceAfter is how long a primary cut off from its replicas and the
	// API server runs before its agent fences it: the operator's failover
	// grace (agent.Config.FenceAfter). 0 never fences.
	FenceAfter time.Duration
}

// StatefulSet returns the StatefulSet running the database, with agent a.
// Its replicas are spec.replicas, but while the primary is an instance a
// scale-in would remove (see instanceCount): the one child that reads
// status.
func StatefulSet(m *databasev1.MySQL, a Agent) *appsv1ac.StatefulSetApplyConfiguration {
	whenDeleted := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if m.Spec.VolumeDeletionPolicy == databasev1.VolumeDelete {
		whenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	return appsv1ac.StatefulSet(StatefulSetName(m), m.Namespace).
		WithLabels(childLabels(m)).
		WithOwnerReferences(ownerRef(m)).
		WithSpec(appsv1ac.StatefulSetSpec().
			WithReplicas(int32(InstanceCount(m))).
			WithServiceName(HeadlessServiceName(m)).
			// Every instance starts at once: the operator, not the
			// StatefulSet's order, decides who is primary.
			WithPodManagementPolicy(appsv1.ParallelPodManagement).
			// The operator rolls the pods, the primary last (rollout.go).
			WithUpdateStrategy(appsv1ac.StatefulSetUpdateStrategy().WithType(appsv1.OnDeleteStatefulSetStrategyType)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(m))).
			WithPersistentVolumeClaimRetentionPolicy(appsv1ac.StatefulSetPersistentVolumeClaimRetentionPolicy().
				WithWhenDeleted(whenDeleted).
				WithWhenScaled(appsv1.RetainPersistentVolumeClaimRetentionPolicyType)).
			WithTemplate(podTemplate(m, a)).
			WithVolumeClaimTemplates(dataClaim(m)))
}

func dataClaim(m *databasev1.MySQL) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	size := m.Spec.StorageSize
	if size == "" {
		size = defaultStorageSize
	}
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(corev1.ReadWriteOnce).
		WithVolumeMode(corev1.PersistentVolumeFilesystem).
		WithResources(corev1ac.VolumeResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}))
	if m.Spec.StorageClassName != nil {
		spec.WithStorageClassName(*m.Spec.StorageClassName)
	}
	// A claim template carries no namespace: the StatefulSet's is used.
	// volumeClaimTemplates is an atomic list, so the operator owns the
	// fields the API server defaults in it (volumeMode, status.phase):
	// they are stated here so that an unchanged template compares equal.
	claim := &corev1ac.PersistentVolumeClaimApplyConfiguration{}
	return claim.WithName(DataVolume).WithSpec(spec).
		WithStatus(corev1ac.PersistentVolumeClaimStatus().WithPhase(corev1.ClaimPending))
}

func podTemplate(m *databasev1.MySQL, a Agent) *corev1ac.PodTemplateSpecApplyConfiguration {
	spec := corev1ac.PodSpec().
		WithAutomountServiceAccountToken(false).
		WithEnableServiceLinks(false).
		// The agent may crash the server (agent.Config.Crash): one
		// process namespace for the pod.
		WithShareProcessNamespace(true).
		WithTerminationGracePeriodSeconds(60).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(mysqlUID).
			WithRunAsGroup(mysqlUID).
			WithFSGroup(mysqlUID).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithInitContainers(installAgentContainer(a.Image), initContainer(m)).
		WithContainers(mysqlContainer(m), agentContainer(m, a.FenceAfter)).
		WithVolumes(podVolumes(m)...)
	if len(m.Spec.NodeSelector) > 0 {
		spec.WithNodeSelector(m.Spec.NodeSelector)
	}
	for i := range m.Spec.Tolerations {
		spec.WithTolerations(toleration(m.Spec.Tolerations[i]))
	}
	if m.Spec.Affinity != nil {
		spec.WithAffinity(affinity(m.Spec.Affinity))
	}
	return corev1ac.PodTemplateSpec().
		WithLabels(PodLabels(m)).
		WithAnnotations(podAnnotations(m)).
		WithSpec(spec)
}

// restricted is the security context of every container.
func restricted() *corev1ac.SecurityContextApplyConfiguration {
	return corev1ac.SecurityContext().
		WithAllowPrivilegeEscalation(false).
		WithReadOnlyRootFilesystem(true).
		WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))
}

// mount returns a volume mount.
func mount(volume, path string, readOnly bool) *corev1ac.VolumeMountApplyConfiguration {
	vm := corev1ac.VolumeMount().WithName(volume).WithMountPath(path)
	if readOnly {
		vm.WithReadOnly(true)
	}
	return vm
}

// LoginCommand is what `kubectl mysql login` runs in the server's
// container: the agent's login as user, the client's args after it; the
// password goes on its standard input.
func LoginCommand(user string, clientArgs []string) []string {
	return agentCommand("login", append([]string{"--user=" + user, "--socket=" + socketPath, "--"}, clientArgs...)...)
}

// agentCommand is the agent binary the install-agent container copied.
func agentCommand(sub string, args ...string) []string {
	return append([]string{agentMountPath + "/agent", sub}, args...)
}

func installAgentContainer(agentImage string) *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().WithName("install-agent").WithImage(agentImage).
		WithCommand("/agent", "install", agentMountPath+"/agent").
		WithSecurityContext(restricted()).
		WithVolumeMounts(mount(agentVolume, agentMountPath, false))
}

func initContainer(m *databasev1.MySQL) *corev1ac.ContainerApplyConfiguration {
	reportHost := "$(POD_NAME)." + HeadlessServiceName(m) + ".$(POD_NAMESPACE).svc"
	args := []string{"--data-dir=" + dataDir, "--pod-conf=" + podCnfPath, "--secrets=" + secretsMountPath,
		"--report-host=" + reportHost, "--engine=" + engineOf(m), "--engine-version=" + m.Spec.Version}
	mounts := []*corev1ac.VolumeMountApplyConfiguration{mount(DataVolume, dataMountPath, false), mount(runVolume, runMountPath, false),
		mount(tmpVolume, tmpMountPath, false), mount(agentVolume, agentMountPath, true), mount(secretsVolume, secretsMountPath, true)}
	if m.Spec.Restore != nil {
		// Instance 0 restores, and replays binary logs with a server of
		// its own on the restored copy: it needs my.cnf too.
		args = append(args, "--restore-dir="+restoreMountPath, "--server-config="+myCnfPath)
		mounts = append(mounts, mount(restoreVolume, restoreMountPath, true), mount(configVolume, configMountPath, true))
	}
	return corev1ac.Container().WithName("init").WithImage(Image(m)).
		WithCommand(agentCommand("init", args...)...).
		// A failure's message is the end of its log: what the server or
		// the check of the image said (see mysql's pod trouble).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithEnv(fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace")).
		WithSecurityContext(restricted()).
		WithVolumeMounts(mounts...)
}

// fieldEnv is an environment variable from the pod's own fields. The
// selector is an atomic struct, owned whole: the apiVersion the API server
// would default is stated, so that an unchanged one compares equal.
func fieldEnv(name, path string) *corev1ac.EnvVarApplyConfiguration {
	return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
		WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").WithFieldPath(path)))
}

// probe is an HTTP probe of the agent. The port is a number: a named port
// must be the probed container's own, and the agent's is its sidecar's.
func probe(path string, period, timeout, failures int32) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().
		WithHTTPGet(corev1ac.HTTPGetAction().WithPath(path).WithPort(intstr.FromInt32(AgentPort))).
		WithPeriodSeconds(period).WithTimeoutSeconds(timeout).WithFailureThreshold(failures)
}

func mysqlContainer(m *databasev1.MySQL) *corev1ac.ContainerApplyConfiguration {
	c := corev1ac.Container().
		WithName(ServerContainerName).
		WithImage(Image(m)).
		// The agent swaps in a prepared seed, if any, and runs the server
		// (agent.RunServer), again in place after a crash it asked for.
		WithCommand(agentCommand("run-server", "--data-dir="+dataDir, "--pid-file="+pidPath, "--",
			serverBinary(m), "--defaults-file="+myCnfPath)...).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithPorts(corev1ac.ContainerPort().WithName("mysql").WithContainerPort(MySQLPort).WithProtocol(corev1.ProtocolTCP)).
		// Crash recovery of a large data directory takes its time: the
		// startup probe allows ten minutes before liveness takes over.
		WithStartupProbe(probe("/healthz", 2, 5, 300)).
		WithLivenessProbe(probe("/healthz", 10, 5, 6)).
		// Readiness is asked every second and answered within one (the
		// agent asks its server over the socket): a pod whose network
		// is lost is not ready within about two seconds, which starts
		// the data plane's failover grace (dataplane.primaryWatch).
		WithReadinessProbe(probe("/readyz", 1, 1, 2)).
		WithSecurityContext(restricted()).
		WithVolumeMounts(mount(DataVolume, dataMountPath, false), mount(configVolume, configMountPath, true),
			mount(runVolume, runMountPath, false), mount(tmpVolume, tmpMountPath, false), mount(agentVolume, agentMountPath, true)).
		WithVolumeMounts(tlsMounts(m)...)
	if r := m.Spec.Resources; len(r.Limits) > 0 || len(r.Requests) > 0 {
		res := corev1ac.ResourceRequirements()
		if len(r.Limits) > 0 {
			res.WithLimits(r.Limits)
		}
		if len(r.Requests) > 0 {
			res.WithRequests(r.Requests)
		}
		c.WithResources(res)
	}
	return c
}

func agentContainer(m *databasev1.MySQL, fenceAfter time.Duration) *corev1ac.ContainerApplyConfiguration {
	args := []string{"--socket=" + socketPath, "--secrets=" + agentSecretMountPath, "--listen=:" + agentPortString,
		"--data-dir=" + dataDir, "--server-config=" + myCnfPath, "--pid-file=" + pidPath, "--fence-after=" + fenceAfter.String()}
	mounts := []*corev1ac.VolumeMountApplyConfiguration{mount(runVolume, runMountPath, false), mount(agentVolume, agentMountPath, true),
		mount(agentSecretVolume, agentSecretMountPath, true), mount(DataVolume, dataMountPath, false),
		mount(configVolume, configMountPath, true), mount(tmpVolume, tmpMountPath, false)}
	ports := []*corev1ac.ContainerPortApplyConfiguration{
		corev1ac.ContainerPort().WithName(agentPortName).WithContainerPort(AgentPort).WithProtocol(corev1.ProtocolTCP)}
	if tlsOn(m) {
		// The agent reloads the server's certificate when it changes, and
		// serves its API over mutual TLS with it.
		args = append(args, "--tls-dir="+TLSMountPath, "--tls-listen=:"+strconv.Itoa(AgentTLSPort))
		mounts = append(mounts, tlsMounts(m)...)
		ports = append(ports, corev1ac.ContainerPort().WithName(agentTLSPortName).WithContainerPort(AgentTLSPort).WithProtocol(corev1.ProtocolTCP))
	}
	if m.Spec.Backup != nil {
		// The agent takes backups and archives the binary logs.
		args = append(args, "--backup-dir="+backupMountPath)
		mounts = append(mounts, mount(backupVolume, backupMountPath, true))
	}
	return corev1ac.Container().WithName("agent").WithImage(Image(m)).
		WithCommand(agentCommand("serve", args...)...).
		WithPorts(ports...).
		WithResources(corev1ac.ResourceRequirements().WithRequests(corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")})).
		WithSecurityContext(restricted()).
		// The data volume: the agent streams backups of it and unpacks
		// seeds beside the data directory; tmp: mariadb-backup's files.
		WithVolumeMounts(mounts...)
}

// podVolumes are the pod's volumes but the data claim. The passwords are
// files, never environment variables: the init container sees every
// password, the agent its own only.
func podVolumes(m *databasev1.MySQL) []*corev1ac.VolumeApplyConfiguration {
	rootSecret, rootKey := PasswordRef(m)
	secretItem := func(key, path string) *corev1ac.KeyToPathApplyConfiguration {
		return corev1ac.KeyToPath().WithKey(key).WithPath(path)
	}
	operator := func(items ...*corev1ac.KeyToPathApplyConfiguration) *corev1ac.VolumeProjectionApplyConfiguration {
		return corev1ac.VolumeProjection().WithSecret(corev1ac.SecretProjection().WithName(OperatorSecretName(m)).WithItems(items...))
	}
	return append([]*corev1ac.VolumeApplyConfiguration{
		corev1ac.Volume().WithName(configVolume).WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(ConfigMapName(m))),
		corev1ac.Volume().WithName(runVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		corev1ac.Volume().WithName(tmpVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		corev1ac.Volume().WithName(agentVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		corev1ac.Volume().WithName(secretsVolume).WithProjected(corev1ac.ProjectedVolumeSource().WithDefaultMode(0o440).WithSources(
			corev1ac.VolumeProjection().WithSecret(corev1ac.SecretProjection().WithName(rootSecret).WithItems(secretItem(rootKey, agent.RootPasswordFile))),
			operator(secretItem(AdminPasswordKey, agent.AdminPasswordFile), secretItem(ReplPasswordKey, agent.ReplPasswordFile),
				secretItem(AgentPasswordKey, agent.AgentPasswordFile)))),
		corev1ac.Volume().WithName(agentSecretVolume).WithProjected(corev1ac.ProjectedVolumeSource().WithDefaultMode(0o440).WithSources(
			operator(secretItem(AgentPasswordKey, agent.AgentPasswordFile)))),
	}, append(storageVolumes(m), tlsVolumes(m)...)...)
}

// engineOf is the MySQL's engine, MySQL when the spec leaves it out.
func engineOf(m *databasev1.MySQL) string {
	if m.Spec.Engine == "" {
		return string(databasev1.EngineMySQL)
	}
	return string(m.Spec.Engine)
}

// serverBinary is the server of the engine.
func serverBinary(m *databasev1.MySQL) string {
	if m.Spec.Engine == databasev1.EngineMariaDB {
		return "mariadbd"
	}
	return "mysqld"
}
