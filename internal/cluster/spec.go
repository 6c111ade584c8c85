package cluster

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// RealNodeSpec is the spec of a MySQL of replicas whose servers run on the
// real node: the MariaDB image built here, the node's local volumes, the
// node picked and its taint tolerated.
func RealNodeSpec(replicas int32) databasev1.MySQLSpec {
	return databasev1.MySQLSpec{Replicas: replicas, Engine: databasev1.EngineMariaDB, Version: "10.11", Image: MariaDBImage,
		StorageSize: "1Gi", StorageClassName: ptr.To(LocalStorageClass),
		Config:       map[string]databasev1.ConfigValue{"max_connections": "100"},
		NodeSelector: map[string]string{"kubernetes.io/hostname": RealNodeName},
		Tolerations:  []corev1.Toleration{{Key: RealNodeTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
}
