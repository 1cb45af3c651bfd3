// Package kubernetes is the Kubernetes deployment of slotd: the manifests
// (*.yaml), the bootstrap script that forms the cluster (bootstrap.sh, the
// image's slotd-bootstrap) and the probes (probe.sh, slotd-probe). It has no
// Go code of its own: its tests decode every manifest strictly into the
// Kubernetes API types, check that the pieces agree with each other, and run
// the scripts against local slotd processes.
package kubernetes
