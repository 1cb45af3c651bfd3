// Package faults is the fault suite's network: it runs each node of a
// cluster in a network namespace of its own, as if on its own host, and
// routes every connection between nodes, and from clients to nodes,
// through a userspace proxy in the test's namespace that can cut, one way
// or both, and delay any link between two given nodes. Its tests (run as
// root; skipped with a message where namespaces are unavailable) inject
// partitions, SIGSTOPs and delays under a writer and check what a cluster
// must guarantee after every heal.
//
// Layout: a bridge in the test's namespace holds the proxy address
// (10.N.0.254) and one veth per node namespace (node i at 10.N.0.i). Node i
// listens on 10.N.0.i and announces 10.N.0.254 with ports of its own, on
// which the proxy forwards to it: a node's peers, its replicas and clients
// all dial the proxy, which tells who is dialling by the source address
// (a node's, or the test's for clients).
package faults
