// Package busv1 owns the cluster-bus wire messages between slotd nodes
// (bus.proto; bus.pb.go is generated from it by protoc-gen-go and is
// exempt from the file-size rule).
package busv1
