package children

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// stripFields drops every managedFields entry but the operator's own.
var stripFields = applyset.StripForeignManagedFields(vocabulary.FieldManager)

// shardedKinds are the kinds a manager reconciles: a sharded manager
// caches, and so reconciles, only the objects its selector selects.
var shardedKinds = []client.Object{&databasev1.MySQL{}, &databasev1.MySQLDatabase{}, &databasev1.MySQLUser{}, &databasev1.MySQLGrant{},
	&databasev1.MySQLBackup{}}

// CacheOptions returns the informer cache options of the manager, from the
// table of child kinds: children are cached only when they carry the
// operator's managed-by label, summarized (their managedFields replaced by
// the hash of the fields the operator owns, a StatefulSet without its pod
// template); every other object keeps only the operator's own
// managedFields entry. Secrets are cached in every namespace, so that
// a rootPasswordSecretRef is watched, but only the operator's own Secrets
// keep their values: other Secrets keep their keys with empty values.
//
// shard selects the MySQLs, databases, users and grants of this manager
// (labels.Everything() for all, else Flux's --watch-label-selector
// convention on LabelShard): their children, which carry the MySQL's shard
// key, are cached only when the selector selects them too.
func CacheOptions(shard labels.Selector) cache.Options {
	owned := labels.SelectorFromSet(labels.Set{vocabulary.LabelManagedBy: vocabulary.FieldManager})
	if reqs, selective := shard.Requirements(); selective {
		owned = owned.Add(reqs...)
	}
	byObject := make(map[client.Object]cache.ByObject, len(childKinds)+1+len(shardedKinds))
	for _, k := range childKinds {
		if k.cache != nil {
			byObject[k.object] = *k.cache
			continue
		}
		byObject[k.object] = cache.ByObject{Label: owned, Transform: k.transform}
	}
	// The database pods: not children (the StatefulSet makes them), but
	// the operator watches them and labels their roles. They are cached in
	// every shard: the shard key is not in their template, so that moving
	// a MySQL to another shard neither rolls its pods nor hides them from
	// the manager taking it over.
	byObject[&corev1.Pod{}] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{vocabulary.LabelManagedBy: vocabulary.FieldManager}), Transform: stripPod}
	if !shard.Empty() {
		for _, o := range shardedKinds {
			byObject[o] = cache.ByObject{Label: shard}
		}
	}
	return cache.Options{DefaultTransform: stripFields, ByObject: byObject}
}

// cacheSecret is the cache transform of Secrets: the operator's own are
// summarized (applyset.Summarize); any other keeps its keys, with empty
// values, and no managedFields.
func cacheSecret(in any) (any, error) {
	s, ok := in.(*corev1.Secret)
	if !ok {
		return in, nil
	}
	if s.Labels[vocabulary.LabelManagedBy] == vocabulary.FieldManager {
		return summarizeSecret(in)
	}
	for k := range s.Data {
		s.Data[k] = nil
	}
	s.StringData, s.ManagedFields = nil, nil
	return s, nil
}

var summarizeSecret = applyset.Summarize[corev1.Secret](vocabulary.FieldManager, nil)

// trimStatefulSet drops from the cache's copy of a StatefulSet its pod
// template, most of it: the operator reads a StatefulSet's counts,
// revisions, strategy and claim templates, and compares what it applied
// through the summary.
func trimStatefulSet(s *appsv1.StatefulSet) { s.Spec.Template = corev1.PodTemplateSpec{} }

// trimService drops from the cache's copy of a Service its spec and
// status: the operator reads its Services only to apply and prune them,
// which needs their metadata and the summary, and four per MySQL make
// Services the most numerous objects it caches.
func trimService(s *corev1.Service) { s.Spec, s.Status = corev1.ServiceSpec{}, corev1.ServiceStatus{} }

// trimConfigMap drops from the cache's copy of a ConfigMap its data, the
// rendered configuration, which the operator compares through the summary.
func trimConfigMap(c *corev1.ConfigMap) { c.Data, c.BinaryData = nil, nil }

// stripPod is the cache transform of the database pods: the operator reads
// their metadata and what their status says of their health (phase,
// address, whether scheduled and ready, the state of each container) and
// their DNS identity (hostname and subdomain), never the rest of their
// spec, which is most of a pod (the containers of the
// template, their volumes and environment), nor what the kubelet reports
// of each container's image, mounts, resources and user. Pods are the
// largest objects the manager caches, one per instance: a real node's pod
// holds about 4 KB of heap stripped, 13 KB with its whole status
// (BenchmarkCacheMySQL; TestStripPod shows that the operator reads a
// stripped pod as it reads the pod).
func stripPod(in any) (any, error) {
	if p, ok := in.(*corev1.Pod); ok {
		// Of the spec, only the pod's DNS identity (ReplicationHost).
		p.Spec = corev1.PodSpec{Hostname: p.Spec.Hostname, Subdomain: p.Spec.Subdomain}
		p.ManagedFields = nil
		p.Status = corev1.PodStatus{
			Phase: p.Status.Phase, Reason: p.Status.Reason, Message: p.Status.Message, PodIP: p.Status.PodIP,
			Conditions:            readConditions(p.Status.Conditions),
			InitContainerStatuses: trimContainerStatuses(p.Status.InitContainerStatuses),
			ContainerStatuses:     trimContainerStatuses(p.Status.ContainerStatuses),
		}
	}
	return in, nil
}

// readConditions keeps of a pod's conditions those the operator reads:
// whether it is scheduled, and ready.
func readConditions(in []corev1.PodCondition) []corev1.PodCondition {
	// A copy: the kept two would hold on to the whole array.
	return slices.Clone(slices.DeleteFunc(in, func(c corev1.PodCondition) bool {
		return c.Type != corev1.PodScheduled && c.Type != corev1.PodReady
	}))
}

// trimContainerStatuses keeps of each container status what the operator
// reads: its name, state, last termination, readiness and restarts.
func trimContainerStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	for i, c := range in {
		if t := c.LastTerminationState.Terminated; t != nil {
			// Of the end of the log the kubelet keeps, the error line.
			t.Message = LastErrorLine(t.Message)
		}
		in[i] = corev1.ContainerStatus{Name: c.Name, State: c.State, LastTerminationState: c.LastTerminationState,
			Ready: c.Ready, RestartCount: c.RestartCount, Started: c.Started}
	}
	return in
}
