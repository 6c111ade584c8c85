// Package children is the desired state of a MySQL: pure builders that
// turn a MySQL into the apply configurations of its children (password
// Secrets, the my.cnf ConfigMap, the Services, the StatefulSet and its pod
// template, the PodDisruptionBudget), the names of the children and of the
// instances' pods, and the one table of child kinds that drives the
// watches, the prune, the ApplySet parent's group-kinds and what the
// manager's cache keeps of each kind (CacheOptions).
//
// Nothing here calls a client: a golden file pins each builder
// (go test ./controller/children -run Golden -update). It imports
// applyset, agent (the files the pod mounts), api and vocabulary; every
// reconciler imports it.
package children
