package main

import (
	"strings"

	"github.com/idforge/idforge/auth"
)

// nodeURL turns a node address as the commands take it ("host:port" or an
// http(s) URL with an optional path prefix) into the URL API paths are
// appended to.
func nodeURL(addr string, useTLS bool) string {
	if !strings.Contains(addr, "://") {
		scheme := "http://"
		if useTLS {
			scheme = "https://"
		}
		addr = scheme + addr
	}
	return strings.TrimRight(addr, "/")
}

// tokenFrom is the token a client command sends: the flag's value, else
// IDFORGE_TOKEN, else IDFORGE_ISSUE_TOKEN (the variables a server reads
// its tokens from, so a command run beside it needs no flag).
func tokenFrom(flagValue string, getenv func(string) string) string {
	for _, t := range []string{flagValue, getenv(auth.EnvToken), getenv(auth.EnvIssueToken)} {
		if t != "" {
			return t
		}
	}
	return ""
}
