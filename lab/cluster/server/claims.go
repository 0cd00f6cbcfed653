package main

// The claim mapper: who is calling the frontend. A bearer token (gRPC metadata `authorization: Bearer <jws>`)
// is verified against the identity issuers and becomes a caller with the token's principal, tenant and roles. A
// call without a token is a caller with no role, except a TLS client whose verified certificate's common name is
// the configured viewer name (the Web UI's certificate in compose): that caller is a viewer, nothing more. A token
// that does not verify fails the call (PermissionDenied), whatever the API.

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/server/common/authorization"
)

// authType marks claims this mapper made (the server's own internal claims carry "temporal").
const authType = "ledgerloop"

// caller is what the authorizer decides on; it travels in Claims.Extensions.
type caller struct {
	Principal string
	Tenant    string
	Issuer    string
	Roles     []string
	// Via says how the caller was identified: "token", "tls-viewer" or "none".
	Via string
}

type claimMapper struct {
	issuers  issuerProvider
	viewerCN string
	now      func() time.Time
}

func newClaimMapper(issuers issuerProvider, viewerCN string) *claimMapper {
	return &claimMapper{issuers: issuers, viewerCN: viewerCN, now: time.Now}
}

// AuthInfoRequired: a call with neither a token nor a client certificate gets no claims at all (nil), which the
// authorizer treats as anonymous.
func (m *claimMapper) AuthInfoRequired() bool { return true }

func bearer(header string) (string, error) {
	h := strings.TrimSpace(header)
	if h == "" {
		return "", nil
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", fmt.Errorf("the authorization header is not `Bearer <token>`")
	}
	return strings.TrimSpace(token), nil
}

func (m *claimMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	token, err := bearer(info.AuthToken)
	if err != nil {
		return nil, err
	}
	if token == "" {
		c := &caller{Via: "none"}
		if m.viewerCN != "" && info.TLSSubject != nil && info.TLSSubject.CommonName == m.viewerCN {
			c = &caller{Principal: "tls:" + m.viewerCN, Roles: []string{roleViewer}, Via: "tls-viewer"}
		}
		return &authorization.Claims{Subject: c.Principal, AuthType: authType, Extensions: c}, nil
	}
	issuers, err := m.issuers.current()
	if err != nil {
		return nil, err
	}
	if len(issuers) == 0 {
		return nil, errNoIssuers
	}
	id, err := verifyToken(issuers, token, m.now())
	if err != nil {
		return nil, err
	}
	c := &caller{Principal: id.Principal, Tenant: id.Tenant, Issuer: id.Issuer, Roles: id.Roles, Via: "token"}
	return &authorization.Claims{Subject: id.Principal, AuthType: authType, Extensions: c}, nil
}
