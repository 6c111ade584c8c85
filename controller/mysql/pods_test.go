package mysql

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// TestPodTrouble covers the pod states a MySQL's status explains.
func TestPodTrouble(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	pod := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", CreationTimestamp: created}}
		mut(p)
		return p
	}
	waiting := func(reason, msg string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mysql", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
		}
	}
	tests := []struct {
		name, reason, message string
		pod                   *corev1.Pod
	}{
		{"running", "", "", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mysql", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		})},
		{"creating", "", "", pod(waiting("ContainerCreating", ""))},
		{"unschedulable", vocabulary.ReasonPodUnschedulable, "pod db-0 cannot be scheduled: 0/1 nodes are available", pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available"}}
		})},
		{"image", vocabulary.ReasonImagePullFailed, "pod db-0, container mysql: ImagePullBackOff: Back-off pulling image", pod(waiting("ImagePullBackOff", "Back-off pulling image"))},
		{"init crash", vocabulary.ReasonContainerFailing, "pod db-0, container init: CrashLoopBackOff (last exit code 1, Error)", pod(func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
		})},
		{"server crash", vocabulary.ReasonContainerFailing, "pod db-0, container mysql: CrashLoopBackOff (last exit code 1, Error): " +
			"2026-12-06 10:00:00 0 [ERROR] mariadbd: unknown variable 'innodb_buffer_pool_sise=1G'", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mysql", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
					Message: "2026-12-06 10:00:00 0 [Note] Starting MariaDB 10.11.14 as process 1\n" +
						"2026-12-06 10:00:00 0 [ERROR] mariadbd: unknown variable 'innodb_buffer_pool_sise=1G'\n" +
						"2026-12-06 10:00:00 0 [ERROR] Aborting\n"}}}}
		})},
		{"wrong image", vocabulary.ReasonContainerFailing, "pod db-0, container init: CrashLoopBackOff (last exit code 1, Error): " +
			"agent init: the image's server is MySQL 8.4.3 (/usr/sbin/mysqld), but spec.engine is MariaDB", pod(func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
					Message: "agent init: the image's server is MySQL 8.4.3 (/usr/sbin/mysqld), but spec.engine is MariaDB\n"}}}}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, msg, since, ok := podTrouble(tt.pod)
			if ok != (tt.reason != "") || reason != tt.reason || msg != tt.message {
				t.Fatalf("podTrouble = %q, %q, %t; want %q, %q", reason, msg, ok, tt.reason, tt.message)
			}
			if ok && since.IsZero() {
				t.Error("no time the trouble started")
			}
		})
	}
}

// TestEndOfLife checks the end-of-life message against the vendors' dates.
func TestEndOfLife(t *testing.T) {
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		engine   databasev1.Engine
		version  string
		eol      bool
		contains string
	}{
		{"", "8.0", true, "MySQL 8.0 reached its end of life on 2026-04-30"},
		{databasev1.EngineMySQL, "5.7", true, "2023-10-31"},
		{databasev1.EngineMySQL, "8.4", false, ""},
		{databasev1.EngineMariaDB, "10.11", false, ""},
	} {
		m := &databasev1.MySQL{Spec: databasev1.MySQLSpec{Engine: tt.engine, Version: tt.version}}
		got := endOfLife(m, now)
		if (got != "") != tt.eol || !strings.Contains(got, tt.contains) {
			t.Errorf("%s %s: %q", tt.engine, tt.version, got)
		}
	}
}

// TestJudgePods shows when a pod's trouble reaches status: not within
// troubleGrace, then as the reason the MySQL waits, then as a stall; each
// time with when to look again. A pod whose claim is being bound is a wait
// on storage past stallAfter, not trouble, until StorageStallAfter; one
// whose claim has just been bound is unschedulable since the binding.
func TestJudgePods(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 10, 0, 0, time.UTC)
	unschedulable := func(name string, since time.Duration) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			LastTransitionTime: metav1.NewTime(now.Add(-since)), Message: "0/1 nodes are available"}}}}
	}
	claim := func(pod string, age time.Duration, mut func(*claimWait)) map[string]claimWait {
		w := claimWait{name: "data-" + pod, class: "standard", created: now.Add(-age)}
		if mut != nil {
			mut(&w)
		}
		return map[string]claimWait{pod: w}
	}
	const stallAfter = time.Minute
	tests := []struct {
		name            string
		pods            []corev1.Pod
		claims          map[string]claimWait
		trouble, reason string
		stalled         bool
		wait            string
		recheck         time.Duration
	}{
		{"within the grace", []corev1.Pod{unschedulable("db-0", 3*time.Second)}, nil, "", "", false, "", troubleGrace - 3*time.Second},
		{"past the grace", []corev1.Pod{unschedulable("db-0", 15*time.Second)}, nil, "pod db-0 cannot be scheduled", vocabulary.ReasonPodUnschedulable, false, "", stallAfter - 15*time.Second},
		{"first past the grace", []corev1.Pod{unschedulable("db-0", 2*time.Second), unschedulable("db-1", 20*time.Second)}, nil,
			"pod db-1 cannot be scheduled", vocabulary.ReasonPodUnschedulable, false, "", troubleGrace - 2*time.Second},
		{"stalled", []corev1.Pod{unschedulable("db-0", 2*time.Minute)}, nil, "pod db-0 cannot be scheduled", vocabulary.ReasonPodUnschedulable, true, "", 0},
		{"claim being bound within the grace", []corev1.Pod{unschedulable("db-0", 3*time.Second)}, claim("db-0", 4*time.Second, nil),
			"", "", false, "", stallAfter - 4*time.Second},
		{"claim being bound past troubleGrace", []corev1.Pod{unschedulable("db-0", 30*time.Second)}, claim("db-0", 30*time.Second, nil),
			"", "", false, "", stallAfter - 30*time.Second},
		{"claim bound, the scheduler not back yet", []corev1.Pod{unschedulable("db-0", 3*time.Minute)},
			claim("db-0", 3*time.Minute, func(w *claimWait) { w.bound = now.Add(-2 * time.Second) }), "", "", false, "", troubleGrace - 2*time.Second},
		{"claim bound, still unschedulable", []corev1.Pod{unschedulable("db-0", 3*time.Minute)},
			claim("db-0", 3*time.Minute, func(w *claimWait) { w.bound = now.Add(-2 * time.Minute) }), "pod db-0 cannot be scheduled: 0/1", vocabulary.ReasonPodUnschedulable, true, "", 0},
		{"claim bound before the pod failed", []corev1.Pod{unschedulable("db-0", 20*time.Second)},
			claim("db-0", 3*time.Minute, func(w *claimWait) { w.bound = now.Add(-2 * time.Minute) }), "pod db-0 cannot be scheduled: 0/1", vocabulary.ReasonPodUnschedulable, false, "", stallAfter - 20*time.Second},
		{"claim being bound", []corev1.Pod{unschedulable("db-0", 3*time.Minute)}, claim("db-0", 3*time.Minute, nil),
			"", "", false, "pod db-0 waits for its claim data-db-0 to be bound (StorageClass standard)", StorageStallAfter - 3*time.Minute},
		{"claim being bound and a pod in trouble", []corev1.Pod{unschedulable("db-0", 3*time.Minute), unschedulable("db-1", 20*time.Second)},
			claim("db-0", 3*time.Minute, nil), "pod db-1 cannot be scheduled", vocabulary.ReasonPodUnschedulable, false, "pod db-0 waits", stallAfter - 20*time.Second},
		{"claim never bound", []corev1.Pod{unschedulable("db-0", 11*time.Minute)}, claim("db-0", 11*time.Minute, nil),
			"pod db-0 cannot be scheduled: its claim data-db-0 has not been bound for 10m0s", vocabulary.ReasonVolumeNotBound, true, "", 0},
		{"claim waits for the pod's node", []corev1.Pod{unschedulable("db-0", 3*time.Minute)}, claim("db-0", 3*time.Minute, func(w *claimWait) { w.forNode = true }),
			"pod db-0 cannot be scheduled: 0/1", vocabulary.ReasonPodUnschedulable, true, "", 0},
		{"class missing", []corev1.Pod{unschedulable("db-0", 15*time.Second)}, claim("db-0", 15*time.Second, func(w *claimWait) { w.classMissing = true }),
			"pod db-0 cannot be scheduled: its claim data-db-0 names StorageClass standard, which does not exist", vocabulary.ReasonStorageClassNotFound, false, "", stallAfter - 15*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &observation{pods: tt.pods, claims: tt.claims}
			judgePods(obs, now, stallAfter)
			if !strings.HasPrefix(obs.podTrouble, tt.trouble) || (tt.trouble == "") != (obs.podTrouble == "") || obs.podStallReason != tt.reason ||
				obs.podStalled != tt.stalled || obs.recheck != tt.recheck {
				t.Errorf("trouble %q (%s), stalled %t, recheck %s; want %q (%s), %t, %s",
					obs.podTrouble, obs.podStallReason, obs.podStalled, obs.recheck, tt.trouble, tt.reason, tt.stalled, tt.recheck)
			}
			if !strings.HasPrefix(obs.storageWait, tt.wait) || (tt.wait == "") != (obs.storageWait == "") {
				t.Errorf("storage wait %q, want %q", obs.storageWait, tt.wait)
			}
		})
	}
}

// TestCrashTroubleSince: a container waiting to restart is in trouble
// since it last exited, not since its pod was made: a server that crashed
// once, after running for days, is not stuck.
func TestCrashTroubleSince(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	exited := metav1.NewTime(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", CreationTimestamp: created}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mysql", RestartCount: 1,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", FinishedAt: exited}}}}
	if _, _, since, ok := podTrouble(p); !ok || !since.Equal(exited.Time) {
		t.Errorf("trouble since %v (%t), want the last exit %v", since, ok, exited.Time)
	}
	obs := &observation{pods: []corev1.Pod{*p}}
	judgePods(obs, exited.Add(5*time.Second), time.Minute)
	if obs.podTrouble != "" || obs.podStalled {
		t.Errorf("5 s after a crash: trouble %q, stalled %t; want neither yet", obs.podTrouble, obs.podStalled)
	}
}
