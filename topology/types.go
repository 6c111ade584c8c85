package topology

import "time"

// Instance is what the reconciler observed about one instance of the cluster.
type Instance struct {
	// Index is the instance's ordinal (pod <name>-<Index>).
	Index int
	// Host and Port are the address other instances use to replicate from it.
	Host string
	// Port is the MySQL port of Host.
	Port int
	// PodExists is false when the pod is missing.
	PodExists bool
	// PodReady is the pod's Ready condition.
	PodReady bool
	// Reachable is true when the status query succeeded; the fields below are
	// meaningful only then.
	Reachable bool
	// SourceID identifies the GTIDs this instance originates: server_uuid on MySQL,
	// server_id in decimal on MariaDB.
	SourceID string
	// ReadOnly is true when nobody but the replication threads (and, on MariaDB,
	// the operator's READ_ONLY ADMIN account) can write: super_read_only on MySQL,
	// read_only on MariaDB. Replicas must be ReadOnly.
	ReadOnly bool
	// Writable is true when read_only is OFF. The primary must be Writable.
	Writable bool
	// Executed is the set of transactions the instance has applied.
	Executed GTIDSet
	// Replication is the replica side, nil when the instance replicates from nobody.
	Replication *Replication
	// SemiSyncSource is true when semi-synchronous replication is on as source.
	SemiSyncSource bool
	// SemiSyncWaitCount is the number of acknowledgements the source waits for.
	SemiSyncWaitCount int
	// SemiSyncReplica is true when the instance acknowledges as a semi-sync replica.
	SemiSyncReplica bool
	// SemiSyncWaitSessions is how many of its sessions wait for an
	// acknowledgement as a source: on an instance that is no longer the
	// primary, commits that will never be acknowledged.
	SemiSyncWaitSessions int
}

// Replication is the replica side of an instance (SHOW REPLICA STATUS).
type Replication struct {
	// SourceHost and SourcePort are the configured source.
	SourceHost string
	// TLS says the replica is configured to reach its source over TLS.
	TLS bool
	// SourcePort is the configured source port.
	SourcePort int
	// IORunning is true when the I/O (receiver) thread is running and connected.
	IORunning bool
	// IOConnecting is true while the I/O thread runs but is not connected yet
	// (Slave_IO_Running: Connecting).
	IOConnecting bool
	// SQLRunning is true when the SQL (applier) thread is running.
	SQLRunning bool
	// LastIOError and LastSQLError are the threads' last errors, "" if none.
	LastIOError string
	// LastSQLError is the applier's last error, "" if none.
	LastSQLError string
	// IOErrorTransient says the receiver's last error is a connection that
	// failed or was lost (a client error, 2000-2999), which a retry may
	// clear; another, such as a purged binary log, needs a person.
	IOErrorTransient bool
	// Retrieved is what the receiver got from the source: Retrieved_Gtid_Set on
	// MySQL, Gtid_IO_Pos on MariaDB.
	Retrieved GTIDSet
	// Lag is Seconds_Behind_Source; nil when unknown (a thread is stopped).
	Lag *time.Duration
}

// Cluster is the input of Decide: the spec, the recorded status and the
// observation of every instance.
type Cluster struct {
	// Flavor is the GTID flavor of every instance.
	Flavor Flavor
	// Replicas is the desired number of instances (spec.replicas).
	Replicas int
	// CurrentPrimary is status.currentPrimary, or -1 before a primary was chosen.
	CurrentPrimary int
	// RequestedPrimary asks for a switchover to that index; -1 for none.
	RequestedPrimary int
	// PrimaryUnreachableFor is how long the current primary has been unreachable
	// (0 when it is reachable).
	PrimaryUnreachableFor time.Duration
	// CommitsStuckFor is how long the primary has had commits waiting for
	// acknowledgements without its executed set moving (0 when it has none).
	CommitsStuckFor time.Duration
	// FailoverGrace is how long the primary may be unreachable before failover.
	FailoverGrace time.Duration
	// MaxLag is the lag above which a replica is not ready.
	MaxLag time.Duration
	// SemiSyncAcks is how many replica acknowledgements each commit on the
	// primary waits for: what the engine does with the wait count the primary
	// is configured with (dbop.Dialect.SemiSyncAcks of SemiSyncWaitCount), 0
	// for a single instance. A failover needs enough replicas reachable that
	// one of them has every acknowledged transaction (see Decide).
	SemiSyncAcks int
	// ReplicationTLS is whether replicas should reach their source over
	// TLS (every instance has the servers' certificate); a replica that
	// does otherwise is configured again.
	ReplicationTLS bool
	// Discarded are the instances crashed by ActionDiscardUnacknowledged
	// that still hold the transactions they held then.
	Discarded []int
	// KnownErrant are the instances reported errant before (status), kept while
	// the primary cannot be observed to recompute them.
	KnownErrant []int
	// Instances holds one observation per index 0..Replicas-1, in order.
	Instances []Instance
}

// Role is the part an instance plays in the cluster.
type Role string

// The roles an instance can have.
const (
	// RolePrimary is the writable source of the cluster.
	RolePrimary Role = "Primary"
	// RoleReplica replicates from the primary (whether or not it is ready).
	RoleReplica Role = "Replica"
	// RoleErrant has transactions the primary never had; it is never promoted and
	// never re-initialised automatically.
	RoleErrant Role = "Errant"
	// RoleEmpty has no data and waits to be seeded or bootstrapped.
	RoleEmpty Role = "Empty"
	// RoleUnknown could not be observed.
	RoleUnknown Role = "Unknown"
)

// InstanceState is the decided role and health of one instance.
type InstanceState struct {
	// Index is the instance's ordinal.
	Index int
	// Role is the decided role.
	Role Role
	// Ready is true for a writable, reachable primary and for a replica whose
	// threads run without error and whose lag is under the threshold.
	Ready bool
	// Reason says why the instance is not ready, "" when it is.
	Reason string
}

// ActionKind is the next step the reconciler takes.
type ActionKind string

// The actions Decide can ask for.
const (
	// ActionNone: nothing to do now (Reason may say what is awaited).
	ActionNone ActionKind = "None"
	// ActionBootstrap: make Target (index 0 of a new cluster) the writable primary.
	ActionBootstrap ActionKind = "Bootstrap"
	// ActionSetReadOnly: make Instances read-only (they are not the primary).
	ActionSetReadOnly ActionKind = "SetReadOnly"
	// ActionConfigurePrimary: make Target writable with the semi-sync settings.
	ActionConfigurePrimary ActionKind = "ConfigurePrimary"
	// ActionConfigureReplicas: point Instances at the primary (Target) and start
	// replication with semi-sync acknowledgement when the cluster has replicas.
	ActionConfigureReplicas ActionKind = "ConfigureReplicas"
	// ActionSwitchover: planned change of primary from From to Target, then repoint
	// Instances.
	ActionSwitchover ActionKind = "Switchover"
	// ActionHeartbeat: the primary's commits have waited for CommitsStuckFor
	// for acknowledgements that will never come, though enough replicas hold
	// every transaction it has: a replica that received a transaction and
	// lost its connection before its acknowledgement got through resumes
	// after it, and acknowledges only what it is sent next. Write a
	// heartbeat on Target, the primary: its acknowledgement releases them.
	ActionHeartbeat ActionKind = "Heartbeat"
	// ActionFence: From, the primary, is unreachable and its failover grace
	// runs: stop the receivers of Instances. Should it come back, they are
	// configured again; else the failover need not wait for them.
	ActionFence ActionKind = "Fence"
	// ActionFailover: From is lost; fence Instances, choose the candidate again with
	// ChooseCandidate, promote it and repoint the others.
	ActionFailover ActionKind = "Failover"
	// ActionDiscardUnacknowledged: Target, an old primary that returned (a
	// partition healed), holds transactions of its own the primary does
	// not: it wrote them to its binary log as the primary, and no replica
	// acknowledged them, so no client was told they committed either.
	// It still has semi-sync on as a source, which tells it from a replica
	// written to by hand. Crash its server (MariaDB only): the crash recovery of a server
	// started as a semi-sync replica rolls them back and truncates its
	// binary log, and it rejoins as a replica. Where it is still errant
	// after (Cluster.Discarded), it is reported, never crashed again.
	ActionDiscardUnacknowledged ActionKind = "DiscardUnacknowledged"
	// ActionSeed: copy the data of From (a donor) into the empty Target: MySQL
	// CLONE INSTANCE (dbop.Instance.CloneFrom), MariaDB mariadb-backup then
	// dbop.SeedState, SetGTIDBinlogState and SetGTIDSlavePos. An empty instance
	// is always seeded rather than replicated from scratch, since the primary may
	// have purged its first binary logs.
	ActionSeed ActionKind = "Seed"
)

// Action is what to do next. Fields that do not apply to Kind are -1 or nil.
type Action struct {
	// Kind is the step to take.
	Kind ActionKind
	// Target is the instance acted on: the new primary, or the seeded instance.
	Target int
	// From is the old primary (switchover, failover) or the donor (seed).
	From int
	// Instances are the other instances involved (see each ActionKind).
	Instances []int
	// Reason explains the action in one sentence for events and logs.
	Reason string
}

// Plan is the output of Decide.
type Plan struct {
	// Primary is the primary once the action succeeded; -1 when there is none.
	// The reconciler records it as status.currentPrimary after acting.
	Primary int
	// Instances holds the state of every instance, by index.
	Instances []InstanceState
	// Errant lists the instances with errant transactions, in index order.
	Errant []int
	// SemiSyncWaitCount is how many replica acknowledgements the primary is
	// configured to wait for: SemiSyncWaitCount(Replicas).
	SemiSyncWaitCount int
	// FailoverBlocked says the primary is lost past its grace and no
	// failover can be made safely; Action.Reason says why.
	FailoverBlocked bool
	// Action is the next step.
	Action Action
}
