package agent

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// The agent's metrics of its server, served in clear on the probes' port
// at /metrics (they hold no secret): read at each scrape, one status
// query and one counters query over the pod's socket, with a deadline.
// docs/metrics.md lists them; metrics_test.go checks every one is there.

// metric names one metric of the agent's.
type metric struct {
	name, help string
	labels     []string
}

// The agent's metrics.
var (
	mUp              = metric{"mysql_up", "1 when the server answers its status query, else 0.", nil}
	mReadOnly        = metric{"mysql_read_only", "1 when the server is read-only (a replica, or waiting for the operator), 0 when writable (the primary).", nil}
	mReplica         = metric{"mysql_replica", "1 when the server replicates from a source.", nil}
	mIORunning       = metric{"mysql_replica_io_running", "1 when the replica's receiver is connected to its source.", nil}
	mSQLRunning      = metric{"mysql_replica_sql_running", "1 when the replica's applier runs.", nil}
	mLag             = metric{"mysql_replica_lag_seconds", "Seconds the replica's applier is behind its source, as the server says (absent when it cannot say: the applier stopped).", nil}
	mBehind          = metric{"mysql_replica_transactions_behind", "Transactions the replica received and has not applied (MariaDB: the sequence numbers between its receiver's and its applier's GTID positions), which grows while the applier is stopped.", nil}
	mReplicaErrno    = metric{"mysql_replica_last_error_number", "The last error of the replica's receiver (thread io) or applier (thread sql), 0 for none.", []string{"thread"}}
	mSemiActive      = metric{"mysql_semisync_source_active", "1 when the primary's semi-synchronous replication is on and not fallen back to asynchronous.", nil}
	mSemiClients     = metric{"mysql_semisync_source_clients", "Replicas connected with semi-synchronous acknowledgement.", nil}
	mSemiWaits       = metric{"mysql_semisync_source_wait_sessions", "Sessions waiting now for a replica's acknowledgement.", nil}
	mSemiYes         = metric{"mysql_semisync_source_acknowledged_transactions_total", "Commits a replica acknowledged.", nil}
	mSemiNo          = metric{"mysql_semisync_source_unacknowledged_transactions_total", "Commits made without an acknowledgement.", nil}
	mSemiReplica     = metric{"mysql_semisync_replica_active", "1 when the replica acknowledges its source's commits.", nil}
	mConnections     = metric{"mysql_connections", "Client connections open now.", nil}
	mQueries         = metric{"mysql_queries_total", "Statements clients sent (Questions).", nil}
	mUptime          = metric{"mysql_uptime_seconds", "Seconds the server has run.", nil}
	mBufferPool      = metric{"mysql_innodb_buffer_pool_bytes", "The InnoDB buffer pool's size (state total), free and holding data.", []string{"state"}}
	mArchiveLag      = metric{"mysql_binlog_archive_lag_seconds", "Seconds since the binary log archive last caught up with the primary (primary only, with an archive).", nil}
	mArchiveFiles    = metric{"mysql_binlog_archive_files", "Binary log files the archive copied in the primary's tenure.", nil}
	mArchiveFailing  = metric{"mysql_binlog_archive_failing", "1 while the archive's last round failed.", nil}
	agentMetricNames = []metric{mUp, mReadOnly, mReplica, mIORunning, mSQLRunning, mLag, mBehind, mReplicaErrno, mSemiActive, mSemiClients,
		mSemiWaits, mSemiYes, mSemiNo, mSemiReplica, mConnections, mQueries, mUptime, mBufferPool, mArchiveLag, mArchiveFiles, mArchiveFailing}
)

// desc is the Prometheus description of m.
func (m metric) desc() *prometheus.Desc { return prometheus.NewDesc(m.name, m.help, m.labels, nil) }

// collector reads the server's metrics at each scrape.
type collector struct {
	db      *dbop.Instance
	archive *archiver
	// backups says the archive runs in this pod.
	backups bool
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range agentMetricNames {
		ch <- m.desc()
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	emit := func(m metric, kind prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(m.desc(), kind, v, labels...)
	}
	st, err := c.db.Status(ctx)
	if err != nil {
		emit(mUp, prometheus.GaugeValue, 0)
		return
	}
	emit(mUp, prometheus.GaugeValue, 1)
	emit(mReadOnly, prometheus.GaugeValue, oneIf(st.ReadOnly))
	c.collectReplication(st, emit)
	if counters, err := c.db.Counters(ctx); err == nil {
		emit(mConnections, prometheus.GaugeValue, float64(counters.ThreadsConnected))
		emit(mQueries, prometheus.CounterValue, float64(counters.Questions))
		emit(mUptime, prometheus.GaugeValue, float64(counters.Uptime))
		page := float64(counters.PageSize)
		emit(mBufferPool, prometheus.GaugeValue, float64(counters.BufferPoolPages)*page, "total")
		emit(mBufferPool, prometheus.GaugeValue, float64(counters.BufferPoolFree)*page, "free")
		emit(mBufferPool, prometheus.GaugeValue, float64(counters.BufferPoolData)*page, "data")
	}
	if a := c.archive.status(); c.backups && a.Tenure != "" {
		if !a.Archived.IsZero() {
			emit(mArchiveLag, prometheus.GaugeValue, time.Since(a.Archived).Seconds())
		}
		emit(mArchiveFiles, prometheus.GaugeValue, float64(a.Files))
		emit(mArchiveFailing, prometheus.GaugeValue, oneIf(a.Error != ""))
	}
}

// collectReplication emits the replication and semi-sync metrics of st.
func (c *collector) collectReplication(st *dbop.Status, emit func(metric, prometheus.ValueType, float64, ...string)) {
	emit(mReplica, prometheus.GaugeValue, oneIf(st.Replica != nil))
	if r := st.Replica; r != nil {
		emit(mIORunning, prometheus.GaugeValue, oneIf(r.IOState == "Yes"))
		emit(mSQLRunning, prometheus.GaugeValue, oneIf(r.SQLRunning))
		if r.SecondsBehind != nil {
			emit(mLag, prometheus.GaugeValue, float64(*r.SecondsBehind))
		}
		if behind, ok := transactionsBehind(st); ok {
			emit(mBehind, prometheus.GaugeValue, float64(behind))
		}
		emit(mReplicaErrno, prometheus.GaugeValue, float64(r.LastIOErrno), "io")
		emit(mReplicaErrno, prometheus.GaugeValue, float64(r.LastSQLErrno), "sql")
	}
	s := st.SemiSync
	emit(mSemiActive, prometheus.GaugeValue, oneIf(s.SourceEnabled && s.SourceActive))
	emit(mSemiClients, prometheus.GaugeValue, float64(s.Clients))
	emit(mSemiWaits, prometheus.GaugeValue, float64(s.WaitSessions))
	emit(mSemiYes, prometheus.CounterValue, float64(s.YesTx))
	emit(mSemiNo, prometheus.CounterValue, float64(s.NoTx))
	emit(mSemiReplica, prometheus.GaugeValue, oneIf(s.ReplicaEnabled && s.ReplicaActive))
}

// transactionsBehind is, on MariaDB, how many transactions the replica
// received and has not applied: per domain, the receiver's sequence number
// less the applier's (sequence numbers grow within a domain under
// gtid_strict_mode). Not known on MySQL, whose GTID sets would need the
// source's.
func transactionsBehind(st *dbop.Status) (uint64, bool) {
	if st.Version.Engine != dbop.EngineMariaDB || st.Replica == nil {
		return 0, false
	}
	received, err := topology.ParseMariaDBGTIDSet(st.Replica.Retrieved)
	if err != nil {
		return 0, false
	}
	applied, err := topology.ParseMariaDBGTIDSet(st.GTIDSlavePos)
	if err != nil {
		return 0, false
	}
	done := applied.Progress()
	var behind uint64
	for domain, seq := range received.Progress() {
		if seq > done[domain] {
			behind += seq - done[domain]
		}
	}
	return behind, true
}

// oneIf is 1 for true, 0 for false.
func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// metricsHandler serves the collector's metrics, and nothing else (no Go
// runtime metrics: they are the agent's, not the database's).
func metricsHandler(c *collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
