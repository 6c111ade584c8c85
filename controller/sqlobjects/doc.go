// Package sqlobjects is the reconciler of the SQL objects, MySQLDatabase,
// MySQLUser and MySQLGrant: one generic control loop (sqlReconciler) with
// one sqlKind per kind, applied on the current primary of the MySQL each
// names, compared with what the server shows at every change and every
// drift interval, and status judged by judgeSQLStatus (pure) and written
// in one place.
//
// It reads MySQLs and their pods and Secrets, never their reconciler's
// state: it imports children (the operator Secret's name and key, the
// port), vocabulary, outcome and dbop.
package sqlobjects
