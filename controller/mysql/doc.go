// Package mysql is the MySQL reconciler, the control loop of a MySQL
// object: it marks the MySQL as the ApplySet parent of its children,
// applies the children package's desired state where it differs (the
// password Secrets generated once, the data volumes grown), prunes what is
// no longer desired, observes the children's kstatus and the pods'
// trouble, hands the servers to the data plane (package dataplane), and
// judges the status (judgeStatus, pure) that statusWriter, the one place
// it is written, patches.
//
// It imports children, dataplane, vocabulary and outcome, and applyset;
// the manager's wiring (package controller) imports it.
package mysql
