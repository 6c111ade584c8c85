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
	appName            = "mysql"
	rootPasswordKey    = "password"
	configKey          = "my.cnf"
	mysqlPort          = 3306
	mysqlUID           = 999
	dataVolume         = "data"
	configVolume       = "config"
	runVolume          = "run"
	tmpVolume          = "tmp"
	containerName      = "mysql"
	dataMountPath      = "/var/lib/mysql"
	configMountPath    = "/etc/mysql/conf.d"
	runMountPath       = "/var/run/mysqld"
	tmpMountPath       = "/tmp"
	passwordEnv        = "MYSQL_ROOT_PASSWORD"
	defaultStorageSize = "10Gi"
)

// RootSecretName is the name of the Secret holding a generated root password.
func RootSecretName(m *databasev1.MySQL) string { return m.Name + "-root" }

// ConfigMapName is the name of the ConfigMap holding my.cnf.
func ConfigMapName(m *databasev1.MySQL) string { return m.Name + "-config" }

// HeadlessServiceName is the name of the StatefulSet's governing Service.
func HeadlessServiceName(m *databasev1.MySQL) string { return m.Name + "-headless" }

// ServiceName is the name of the client Service.
func ServiceName(m *databasev1.MySQL) string { return m.Name }

// StatefulSetName is the name of the StatefulSet.
func StatefulSetName(m *databasev1.MySQL) string { return m.Name }

// PodDisruptionBudgetName is the name of the PodDisruptionBudget.
func PodDisruptionBudgetName(m *databasev1.MySQL) string { return m.Name }

// Image returns the container image of a MySQL: spec.image or mysql:<version>.
func Image(m *databasev1.MySQL) string {
	if m.Spec.Image != "" {
		return m.Spec.Image
	}
	return fmt.Sprintf("mysql:%s", m.Spec.Version)
}

// SelectorLabels returns the labels selecting a MySQL's pods.
func SelectorLabels(m *databasev1.MySQL) map[string]string {
	return map[string]string{LabelName: appName, LabelInstance: m.Name}
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
