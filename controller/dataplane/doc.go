// Package dataplane is the operator's loop over a MySQL's database
// servers: observe every instance (one status query each, on a reused
// connection), let topology.Decide choose the one next step, act on it
// through dbop (make a primary, configure replicas, switch over, fail
// over, seed an empty replica through the agents), label the pods with
// their roles, and roll pods of an old revision out, the primary last.
//
// The MySQL reconciler calls DataPlane.Reconcile once per reconcile and
// writes what its Report says into status; this package writes no
// status. It imports children (names, ports, password keys), vocabulary,
// outcome, dbop, topology and agent, never the reconcilers.
package dataplane
