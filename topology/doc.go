// Package topology holds the pure part of the data plane: GTID-set arithmetic for
// MySQL and MariaDB, and the decisions the reconciler takes about a cluster's
// topology (who is primary, who is a healthy replica, who is errant, and what to do
// next). Nothing in this package does I/O: the reconciler observes every instance
// (dbop.Instance.Status), builds a Cluster, calls Decide, and acts on the Plan.
//
// # GTID models
//
// MySQL GTIDs are sets: source UUID (optionally with a tag) and intervals of
// transaction numbers. MySQLGTIDSet implements the exact set algebra that the
// server's GTID_SUBSET and GTID_SUBTRACT functions provide.
//
// MariaDB GTIDs are domain-server-sequence triples and the server keeps positions,
// not sets, so there is no GTID_SUBSET on MariaDB. This package models the
// transactions an instance has as the highest sequence number per (domain,
// server_id) pair, which is what @@gtid_binlog_state reports. The model is sound
// under the settings the operator runs with:
//
//   - gtid_strict_mode=ON: within a domain, sequence numbers only grow along the
//     replication stream, so having (d, s, n) means having every earlier
//     transaction of server s in domain d;
//   - log_slave_updates=ON: replicated transactions are written to the replica's
//     binary log too, so @@gtid_binlog_state lists every (domain, server) the
//     instance has applied, not only its own writes;
//   - distinct server_id per instance, so a local (errant) write on a replica shows
//     up under the replica's own server_id.
//
// "P has every transaction of R" is then: for each (d, s, n) of R, P holds (d, s, m)
// with m >= n (MariaDBGTIDSet.Contains). An errant transaction of R is an entry that
// P does not contain: a write made on R, or a transaction of a former primary that
// the current primary never received. An instance's executed set is the union of
// @@gtid_binlog_state and @@gtid_slave_pos, because an instance seeded from a backup
// knows the history it restored only through gtid_slave_pos (see
// MariaDBExecuted). The replica's retrieved set is Gtid_IO_Pos, a per-domain
// position that fits the same model.
//
// # Failover safety
//
// A primary of n instances is configured to wait for SemiSyncWaitCount(n) = n/2
// semi-sync acknowledgements and never falls back to asynchronous replication;
// what it really waits for is the engine's (dbop.Dialect.SemiSyncAcks, the
// Cluster's SemiSyncAcks): that count on MySQL, one on MariaDB, whatever n is.
// Every acknowledged commit is thus on at least SemiSyncAcks of the n-1 replicas.
// A failover needs FailoverQuorum(n, acks) = (n-1) - (acks-1) of them reachable, not
// errant and holding data: at most acks-1 replicas are left out, too few to hold
// every acknowledger, so one candidate has every acknowledged transaction and
// ChooseCandidate, which takes the candidate holding every other's, finds it.
// Otherwise no failover happens and the plan's reason says why. On MySQL that is
// more than half of the replicas; on MariaDB, every replica. A single instance
// never fails over; two fail over to their replica. TestFailoverNeverLosesAnAcknowledgedWrite
// checks this exhaustively, for both engines and 1 to 10 instances.
package topology
