package children

import (
	"fmt"
	"strconv"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// Keys of the password Secrets, and the ports and container the
// reconcilers reach the servers and agents at.
const (
	// RootPasswordKey is the key of the generated root password Secret.
	RootPasswordKey = "password"
	// AdminPasswordKey, ReplPasswordKey and AgentPasswordKey are the keys
	// of the operator's accounts' passwords in its Secret.
	AdminPasswordKey = "admin"
	// ReplPasswordKey is the replication account's key; see AdminPasswordKey.
	ReplPasswordKey = "replication"
	// AgentPasswordKey is the agent's key (its bearer token and database
	// account); see AdminPasswordKey.
	AgentPasswordKey = "agent"
	// MySQLPort is the servers' port.
	MySQLPort = 3306
	// AgentPort is the agents' port.
	AgentPort = 9080
	// AgentTLSPort is the agents' API port over mutual TLS, while TLS is on.
	AgentTLSPort = 9443
	// ServerContainerName is the name of the server's container.
	ServerContainerName = "mysql"
	// DataVolume is the name of the data claim template: a pod's claim is
	// DataVolume-<pod>.
	DataVolume = "data"
)

// Well-known values of the children that only the builders use.
const (
	appName              = "mysql"
	configKey            = "my.cnf"
	agentPortString      = "9080"
	agentPortName        = "agent"
	agentTLSPortName     = "agent-tls"
	mysqlUID             = 999
	configVolume         = "config"
	runVolume            = "run"
	tmpVolume            = "tmp"
	agentVolume          = "agent"
	secretsVolume        = "secrets"
	agentSecretVolume    = "agent-secret"
	dataMountPath        = "/var/lib/mysql"
	configMountPath      = "/etc/mysql-operator/conf"
	runMountPath         = "/var/run/mysqld"
	tmpMountPath         = "/tmp"
	agentMountPath       = "/opt/mysql-operator"
	secretsMountPath     = "/etc/mysql-operator/secrets"
	agentSecretMountPath = "/etc/mysql-operator/agent"
	defaultStorageSize   = "10Gi"
)

// MaxReplicas is the most replicas a MySQL can have (the CRD's bound), so
// the most data claims its StatefulSet can have made.
const MaxReplicas = 10

// PodName returns the name of the pod of index i.
func PodName(m *databasev1.MySQL, i int) string { return fmt.Sprintf("%s-%d", StatefulSetName(m), i) }

// InstanceCount is how many instances the MySQL runs: spec.replicas, or
// more while the primary is an instance a scale-in removes. Such a primary
// is switched over to one that stays before the StatefulSet shrinks: the
// StatefulSet would delete its pod, and a planned change of primary loses
// no write where a failover would cut clients off unannounced.
func InstanceCount(m *databasev1.MySQL) int {
	return max(int(m.Spec.Replicas), PodIndex(m, m.Status.CurrentPrimary)+1)
}

// PodIndex returns the index of a pod name of m, or -1.
func PodIndex(m *databasev1.MySQL, name string) int {
	prefix := StatefulSetName(m) + "-"
	if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
		return -1
	}
	i, err := strconv.Atoi(name[len(prefix):])
	if err != nil || i < 0 || i >= MaxReplicas {
		return -1
	}
	return i
}

// RootSecretName is the name of the Secret holding a generated root password.
func RootSecretName(m *databasev1.MySQL) string { return m.Name + "-root" }

// OperatorSecretName is the name of the Secret of the operator's own
// database accounts' passwords.
func OperatorSecretName(m *databasev1.MySQL) string { return m.Name + "-operator" }

// ConfigMapName is the name of the ConfigMap holding my.cnf.
func ConfigMapName(m *databasev1.MySQL) string { return m.Name + "-config" }

// HeadlessServiceName is the name of the StatefulSet's governing Service.
func HeadlessServiceName(m *databasev1.MySQL) string { return m.Name + "-headless" }

// ServiceName is the name of the client Service.
func ServiceName(m *databasev1.MySQL) string { return m.Name }

// PrimaryServiceName is the name of the primary's Service.
func PrimaryServiceName(m *databasev1.MySQL) string { return m.Name + "-primary" }

// ReplicasServiceName is the name of the replicas' Service.
func ReplicasServiceName(m *databasev1.MySQL) string { return m.Name + "-replicas" }

// StatefulSetName is the name of the StatefulSet.
func StatefulSetName(m *databasev1.MySQL) string { return m.Name }

// PodDisruptionBudgetName is the name of the PodDisruptionBudget.
func PodDisruptionBudgetName(m *databasev1.MySQL) string { return m.Name }

// Image returns the database image of a MySQL: spec.image, or the
// engine's official image of the version (mysql:<version> or
// mariadb:<version>).
func Image(m *databasev1.MySQL) string {
	switch {
	case m.Spec.Image != "":
		return m.Spec.Image
	case m.Spec.Engine == databasev1.EngineMariaDB:
		return fmt.Sprintf("mariadb:%s", m.Spec.Version)
	}
	return fmt.Sprintf("mysql:%s", m.Spec.Version)
}

// SelectorLabels returns the labels selecting a MySQL's pods.
func SelectorLabels(m *databasev1.MySQL) map[string]string {
	return map[string]string{vocabulary.LabelName: appName, vocabulary.LabelInstance: m.Name}
}

// PodLabels returns the labels of a MySQL's pods: the selector's, and the
// managed-by label the operator's cache selects them on.
func PodLabels(m *databasev1.MySQL) map[string]string {
	l := SelectorLabels(m)
	l[vocabulary.LabelManagedBy] = vocabulary.FieldManager
	return l
}

// PasswordRef returns the Secret name and key the pods read the root password from.
func PasswordRef(m *databasev1.MySQL) (name, key string) {
	if ref := m.Spec.RootPasswordSecretRef; ref != nil {
		key = ref.Key
		if key == "" {
			key = RootPasswordKey
		}
		return ref.Name, key
	}
	return RootSecretName(m), RootPasswordKey
}
