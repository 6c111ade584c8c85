// Package backup holds the reconcilers of backups: one takes the backup a
// MySQLBackup asks for (a ready replica's agent streams it into the
// MySQL's storage; see package agent) and deletes its files when the
// MySQLBackup is deleted; the other creates MySQLBackups on a MySQL's
// schedule and deletes those its retention lets go.
//
// A MySQLBackup is never owned by its MySQL: deleting a MySQL keeps its
// backups, and their files, so that it can be restored.
package backup
