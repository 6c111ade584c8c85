package sqlobjects

import (
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
)

// The status of databases, users and grants, judged apart from writing it.

// waitError is an outcome that is neither done nor failed: the object waits
// for something outside it (its MySQL to have a ready primary, its account
// to exist). It is InProgress with a reason, and tried again after retry.
type waitError struct {
	reason, message string
	retry           time.Duration
}

func (e *waitError) Error() string { return e.message }

// waiting makes the waitError of a reason, its message formatted.
func waiting(reason string, retry time.Duration, format string, args ...any) *waitError {
	return &waitError{reason: reason, message: fmt.Sprintf(format, args...), retry: retry}
}

// asWait returns the waitError err carries, or nil.
func asWait(err error) *waitError {
	var w *waitError
	if errors.As(err, &w) {
		return w
	}
	return nil
}

// refused turns an error the server (or dbop) gives for what was asked, not
// for the state of the server, into a stall; other errors pass unchanged.
func refused(err error) error {
	if err != nil && dbop.IsInvalid(err) {
		return outcome.Stalled(vocabulary.ReasonSQLRejected, "%s", err)
	}
	return err
}

// sqlObservation is what one reconcile of a database, user or grant saw and
// did, for its status.
type sqlObservation struct {
	// ready is the Ready condition's message: what holds on which primary.
	ready string
	// passwordVersion is the resourceVersion of the Secret whose password
	// the account has (users only).
	passwordVersion string
}

// judgeSQLStatus returns the status a database, user or grant should have
// after a reconcile, from the status it had (status reads it from obj),
// what the reconcile observed and how it ended. It is pure: it reads obj
// and changes nothing.
//
// A stall is Stalled; waiting for something outside the object is
// Reconciling with the wait's reason; another error is Reconciling with
// retry; else the object is Ready. observedGeneration advances when the
// outcome is final for this generation (applied, stalled or waiting); a
// retried error leaves it behind.
func judgeSQLStatus[T sqlObject](obj T, status func(T) *databasev1.SQLObjectStatus, obs *sqlObservation, reconcileErr error) databasev1.SQLObjectStatus {
	out := obj.DeepCopyObject().(T)
	final := true
	switch stall, wait := outcome.AsStall(reconcileErr), asWait(reconcileErr); {
	case stall != nil:
		markObjectStalled(out, stall.Reason, stall.Message)
	case wait != nil:
		markObjectReconciling(out, wait.reason, wait.message)
	case reconcileErr != nil:
		final = false
		markObjectReconciling(out, vocabulary.ReasonRetrying, reconcileErr.Error())
	default:
		conditions.MarkTrue(out, databasev1.ConditionReady, vocabulary.ReasonSucceeded, "%s", obs.ready)
		conditions.Delete(out, databasev1.ConditionReconciling)
		conditions.Delete(out, databasev1.ConditionStalled)
	}
	st := status(out)
	if final {
		st.ObservedGeneration = out.GetGeneration()
	}
	return *st
}

// markObjectStalled marks obj Stalled and not Ready for reason.
func markObjectStalled(obj conditions.Setter, reason, message string) {
	conditions.MarkStalled(obj, reason, "%s", message)
	conditions.MarkFalse(obj, databasev1.ConditionReady, reason, "%s", message)
	conditions.Delete(obj, databasev1.ConditionReconciling)
}

// markObjectReconciling marks obj Reconciling and not Ready for reason.
func markObjectReconciling(obj conditions.Setter, reason, message string) {
	conditions.MarkReconciling(obj, reason, "%s", message)
	conditions.MarkFalse(obj, databasev1.ConditionReady, reason, "%s", message)
	conditions.Delete(obj, databasev1.ConditionStalled)
}
