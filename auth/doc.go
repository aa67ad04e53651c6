// Package auth guards idforge's transports with bearer tokens.
//
// Each token, from the config file or the environment, has a role,
// RoleIssue (take IDs, read keys) or RoleAdmin (everything), may be
// limited to some keys and may carry a rate limit. A request presents it
// as "Authorization: Bearer <token>" (HTTP and gRPC metadata) or, over
// HTTP, as the token query or form parameter, as Tinyid's clients send it.
// Every request is classified first (Access, DefaultClassify): open
// requests (health, readiness, metrics, the admin page's HTML) pass
// without a token, reads need any valid token, issuing for a key a token
// allowed that key, admin requests an admin token:
//
//	no token, or an unknown one   HTTP 401 unauthenticated  gRPC Unauthenticated
//	valid token, not allowed      HTTP 403 forbidden        gRPC PermissionDenied
//	over the token's rate         HTTP 429 rate_limited     gRPC ResourceExhausted
//
// HTTP errors use idforge's JSON error body (a 401 with WWW-Authenticate:
// Bearer, a 429 with Retry-After); gRPC errors carry the code as their
// ErrorInfo reason. A presented token is compared with every configured
// one in constant time (SHA-256 digests, crypto/subtle, no early exit), so
// neither timing nor length tells which matched; tokens never appear in
// errors or logs. CheckExposure refuses a server that listens beyond
// loopback without tokens, and ServerTLS builds the TLS configuration (TLS
// 1.2 or later, client certificates required when a CA is given). An
// Authenticator is safe for concurrent use.
package auth
