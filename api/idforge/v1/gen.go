// Package idforgev1 holds idforge's gRPC API: idforge.proto and the Go
// code protoc generates from it. Nothing in it is written by hand except
// the .proto and this file.
//
// Regenerate after editing idforge.proto (protoc 3.21 or later, with
// protoc-gen-go and protoc-gen-go-grpc on PATH):
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@latest
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@latest
//	go generate ./api/...
package idforgev1

//go:generate protoc -I ../.. --go_out=../.. --go_opt=paths=source_relative --go-grpc_out=../.. --go-grpc_opt=paths=source_relative ../../idforge/v1/idforge.proto
