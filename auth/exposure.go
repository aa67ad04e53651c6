package auth

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// ErrExposed is returned by CheckExposure for a server that would listen
// beyond the loopback interface without tokens.
var ErrExposed = errors.New("auth: refusing to serve without authentication on a non-loopback address")

// CheckExposure returns an error wrapping ErrExposed when listenAddr
// ("host:port") reaches beyond this machine and no token is configured:
// anyone on the network could take IDs and create keys. Loopback
// addresses (127.0.0.0/8, ::1, localhost) are allowed without tokens; an
// empty host, 0.0.0.0, ::, any other address and any other host name are
// not. The error says how to set a token.
func CheckExposure(listenAddr string, tokensConfigured bool) error {
	if tokensConfigured {
		return nil
	}
	host, _, err := net.SplitHostPort(listenAddr)
	if err != nil {
		return fmt.Errorf("auth: listen address %q: %w", listenAddr, err)
	}
	if isLoopback(host) {
		return nil
	}
	where := host
	if where == "" {
		where = "every interface"
	}
	return fmt.Errorf("%w: %s listens on %s; configure a token in the config file\n"+
		"    [auth]\n    tokens = [{ token = \"env:%s\", role = \"admin\" }]\n"+
		"or set the environment variable %s=<secret> (an admin token; %s=<secret> adds an issue token), "+
		"e.g. %s=$(openssl rand -hex 16); or listen on 127.0.0.1",
		ErrExposed, listenAddr, where, EnvToken, EnvToken, EnvIssueToken, EnvToken)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsLoopback()
}
