// Package controller reconciles MySQL objects: pure builders turn a MySQL
// spec into the apply configurations of its children, the reconciler applies
// them as one ApplySet and reports status by the kstatus conventions.
package controller

import (
	"fmt"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// Keys and well-known values of the children.
const (
	appName              = "mysql"
	rootPasswordKey      = "password"
	adminPasswordKey     = "admin"
	replPasswordKey      = "replication"
	agentPasswordKey     = "agent"
	configKey            = "my.cnf"
	mysqlPort            = 3306
	agentPort            = 9080
	agentPortString      = "9080"
	agentPortName        = "agent"
	mysqlUID             = 999
	dataVolume           = "data"
	configVolume         = "config"
	runVolume            = "run"
	tmpVolume            = "tmp"
	agentVolume          = "agent"
	secretsVolume        = "secrets"
	agentSecretVolume    = "agent-secret"
	containerName        = "mysql"
	dataMountPath        = "/var/lib/mysql"
	configMountPath      = "/etc/mysql-operator/conf"
	runMountPath         = "/var/run/mysqld"
	tmpMountPath         = "/tmp"
	agentMountPath       = "/opt/mysql-operator"
	secretsMountPath     = "/etc/mysql-operator/secrets"
	agentSecretMountPath = "/etc/mysql-operator/agent"
	defaultStorageSize   = "10Gi"
)

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
	return map[string]string{LabelName: appName, LabelInstance: m.Name}
}

// podLabels returns the labels of a MySQL's pods: the selector's, and the
// managed-by label the operator's cache selects them on.
func podLabels(m *databasev1.MySQL) map[string]string {
	l := SelectorLabels(m)
	l[LabelManagedBy] = FieldManager
	return l
}

// PasswordRef returns the Secret name and key the pods read the root password from.
func PasswordRef(m *databasev1.MySQL) (name, key string) {
	if ref := m.Spec.RootPasswordSecretRef; ref != nil {
		key = ref.Key
		if key == "" {
			key = rootPasswordKey
		}
		return ref.Name, key
	}
	return RootSecretName(m), rootPasswordKey
}
