package children

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// Paths in the database pod. The data directory is a subdirectory of the
// data volume, so that a fresh filesystem's lost+found does not matter.
const (
	dataDir    = dataMountPath + "/data"
	socketPath = runMountPath + "/mysqld.sock"
	pidPath    = runMountPath + "/mysqld.pid"
	podCnfPath = runMountPath + "/pod.cnf"
	myCnfPath  = configMountPath + "/" + configKey
)

// replicaNetTimeout is how many seconds a replica waits for a word from
// its source (a heartbeat comes every second, dbop's heartbeatPeriod)
// before it declares the source lost and reconnects, and how long its
// receiver waits to connect. Fencing stops a receiver waiting for a word at
// once, but one connecting only when its connection attempt ends: 10 s
// keeps the receivers waiting, not connecting, through a failover's first
// seconds, and bounds what a later fence waits. spec.config may set it.
const replicaNetTimeout = "10"

// setting is one line of my.cnf.
type setting struct{ key, value string }

// operatorSettings are the [mysqld] settings the operator owns (the CRD
// refuses them in spec.config) and its defaults, which spec.config may
// override: every instance starts read-only with replication not started,
// writes GTID binary logs durably, and is made writable or a replica by
// the operator.
func operatorSettings(m *databasev1.MySQL) []setting {
	common := []setting{
		{"datadir", dataDir}, {"socket", socketPath}, {"pid_file", pidPath}, {"tmpdir", tmpMountPath},
		{"port", "3306"}, {"bind_address", "*"}, {"skip_name_resolve", "ON"},
		{"log_bin", "binlog"}, {"relay_log", "relay-bin"}, {"binlog_format", "ROW"},
		{"sync_binlog", "1"}, {"innodb_flush_log_at_trx_commit", "1"}, {"character_set_server", "utf8mb4"},
	}
	if m.Spec.Engine == databasev1.EngineMariaDB {
		return append(common, setting{"log_slave_updates", "ON"}, setting{"gtid_strict_mode", "ON"},
			setting{"read_only", "ON"}, setting{"skip_slave_start", "ON"}, setting{"slave_net_timeout", replicaNetTimeout})
	}
	s := append(common, setting{"gtid_mode", "ON"}, setting{"enforce_gtid_consistency", "ON"}, setting{"super_read_only", "ON"})
	if legacyMySQL(m) {
		return append(s, setting{"log_slave_updates", "ON"}, setting{"skip_slave_start", "ON"},
			setting{"plugin_load_add", "semisync_master.so;semisync_slave.so"}, setting{"slave_net_timeout", replicaNetTimeout})
	}
	return append(s, setting{"log_replica_updates", "ON"}, setting{"skip_replica_start", "ON"},
		setting{"plugin_load_add", "semisync_source.so;semisync_replica.so;mysql_clone.so"},
		setting{"replica_net_timeout", replicaNetTimeout})
}

// legacyMySQL says whether the MySQL runs a version that still names
// replication "slave" in its options (5.7, and 8.0 for its semi-sync plugins).
func legacyMySQL(m *databasev1.MySQL) bool {
	return m.Spec.Engine != databasev1.EngineMariaDB && (m.Spec.Version == "5.7" || m.Spec.Version == "8.0")
}

// MyCnf renders my.cnf: the operator's settings, then spec.config, keys
// sorted (a later line wins), then the pod's own settings (server_id,
// report_host), which the agent writes at start.
func MyCnf(m *databasev1.MySQL) string {
	var b strings.Builder
	b.WriteString("[mysqld]\n")
	for _, s := range slices.Concat(operatorSettings(m), tlsSettings(m), resourceSettings(m)) {
		b.WriteString(s.key + " = " + s.value + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(m.Spec.Config)) {
		b.WriteString(k + " = " + string(m.Spec.Config[k]) + "\n")
	}
	b.WriteString("!include " + podCnfPath + "\n")
	return b.String()
}

// ConfigHash returns the hash of my.cnf the pod template carries.
func ConfigHash(m *databasev1.MySQL) string {
	sum := sha256.Sum256([]byte(MyCnf(m)))
	return hex.EncodeToString(sum[:8])
}

// Sizing from the container's memory (its limit, else its request), for
// the settings spec.config leaves out: the buffer pool takes half of it,
// and each connection is allowed 8 MiB of the rest, between 50 and 4000
// connections. Without a memory size the server's own defaults stay
// (a 128 MiB buffer pool, 151 connections).
const (
	bufferPoolShare    = 2 // the buffer pool is memory / bufferPoolShare
	memoryPerConn      = 8 << 20
	minMaxConnections  = 50
	maxMaxConnections  = 4000
	minBufferPoolBytes = 128 << 20
)

// resourceSettings are innodb_buffer_pool_size and max_connections sized
// from the mysqld container's memory, each unless spec.config sets it.
func resourceSettings(m *databasev1.MySQL) []setting {
	mem, ok := m.Spec.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		mem, ok = m.Spec.Resources.Requests[corev1.ResourceMemory]
	}
	if !ok || mem.Value() <= 0 {
		return nil
	}
	bytes := mem.Value()
	var s []setting
	if !configSets(m, "innodb_buffer_pool_size") {
		pool := max(bytes/bufferPoolShare, minBufferPoolBytes) >> 20
		s = append(s, setting{"innodb_buffer_pool_size", strconv.FormatInt(pool, 10) + "M"})
	}
	if !configSets(m, "max_connections") {
		conns := min(max(bytes/bufferPoolShare/memoryPerConn, minMaxConnections), maxMaxConnections)
		s = append(s, setting{"max_connections", strconv.FormatInt(conns, 10)})
	}
	return s
}

// configSets says whether spec.config sets key, spelt with '-' or '_'
// and in any case.
func configSets(m *databasev1.MySQL, key string) bool {
	for k := range m.Spec.Config {
		if strings.ReplaceAll(strings.ToLower(k), "-", "_") == key {
			return true
		}
	}
	return false
}
