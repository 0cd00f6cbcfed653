package main

// Verifying an identity token as the workers do (src/identity/verify.ts): a compact JWS signed with EdDSA by a key
// of a trusted issuer (by kid), exact `iss`, `aud` naming the issuer's audience, `exp` and `iat` within 30 s of
// skew, a lifetime no longer than the issuer allows, a subject, and a mapping to a principal, tenant and roles.
// Errors name what was wrong, never the token.

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

const (
	clockSkewSec  = 30
	maxTokenChars = 8_192
)

var compactJWS = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)

// identity is who a verified token names.
type identity struct {
	Issuer    string
	Subject   string
	Principal string
	Tenant    string
	Roles     []string
}

type tokenError struct{ reason string }

func (e *tokenError) Error() string { return "identity token refused: " + e.reason }

func refuse(format string, args ...any) error {
	return &tokenError{reason: fmt.Sprintf(format, args...)}
}

func decodeSegment(seg string, into any) error {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

// numericDate reads a JWT NumericDate (seconds; JSON number).
func numericDate(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return int64(math.Floor(f)), true
}

func audienceNames(v any) []string {
	switch a := v.(type) {
	case string:
		return []string{a}
	case []any:
		out := make([]string, 0, len(a))
		for _, x := range a {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func boundedString(v any, max int) (string, bool) {
	s, ok := v.(string)
	return s, ok && s != "" && len(s) <= max
}

func roleList(v any) ([]string, bool) {
	if v == nil {
		return []string{}, true
	}
	list, ok := v.([]any)
	if !ok || len(list) > 50 {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := boundedString(x, 100)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// verifyToken checks `token` against `issuers` at `now`.
func verifyToken(issuers []*issuer, token string, now time.Time) (*identity, error) {
	if len(token) > maxTokenChars || !compactJWS.MatchString(token) {
		return nil, refuse("not a compact JWS")
	}
	parts := strings.Split(token, ".")
	var header map[string]any
	if err := decodeSegment(parts[0], &header); err != nil {
		return nil, refuse("the header is malformed")
	}
	if header["alg"] != "EdDSA" {
		return nil, refuse("the token is not signed with EdDSA")
	}
	if _, crit := header["crit"]; crit {
		return nil, refuse("the token names critical header parameters")
	}
	kid, _ := header["kid"].(string)
	var claims map[string]any
	if err := decodeSegment(parts[1], &claims); err != nil {
		return nil, refuse("the payload is malformed")
	}
	iss, _ := claims["iss"].(string)
	var is *issuer
	for _, candidate := range issuers {
		if candidate.name == iss {
			is = candidate
			break
		}
	}
	if is == nil {
		return nil, refuse("the token's issuer is not one this server trusts")
	}
	key, ok := is.keys[kid]
	if !ok {
		return nil, refuse("no key of the issuer matches the token (unknown kid)")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(key, []byte(parts[0]+"."+parts[1]), sig) {
		return nil, refuse("the token signature does not verify")
	}
	audOK := false
	for _, a := range audienceNames(claims["aud"]) {
		audOK = audOK || a == is.audience
	}
	if !audOK {
		return nil, refuse("the token's aud claim does not name %s", is.audience)
	}
	exp, okExp := numericDate(claims["exp"])
	iat, okIat := numericDate(claims["iat"])
	if !okExp || !okIat {
		return nil, refuse("the token has no valid exp and iat")
	}
	t := now.Unix()
	if t >= exp+clockSkewSec {
		return nil, refuse("the token has expired")
	}
	if iat > t+clockSkewSec {
		return nil, refuse("the token is issued in the future")
	}
	if nbf, present := claims["nbf"]; present {
		n, ok := numericDate(nbf)
		if !ok || n > t+clockSkewSec {
			return nil, refuse("the token is not valid yet")
		}
	}
	if exp-iat > is.maxLifetimeSec || t-iat > is.maxLifetimeSec+clockSkewSec {
		return nil, refuse("the token is valid longer than %d s", is.maxLifetimeSec)
	}
	sub, ok := boundedString(claims["sub"], 200)
	if !ok {
		return nil, refuse("the token has no valid subject")
	}
	id := &identity{Issuer: is.name, Subject: sub}
	if !is.mapClaims {
		m, listed := is.subjects[sub]
		if !listed {
			return nil, refuse("the subject maps to no principal of %s", is.name)
		}
		id.Principal, id.Tenant, id.Roles = m.Principal, m.Tenant, append([]string{}, m.Roles...)
		return id, nil
	}
	principal, okP := boundedString(claims["principal"], 200)
	tenant, okT := boundedString(claims["tenant"], 200)
	roles, okR := roleList(claims["roles"])
	if !okP || !okT || !okR {
		return nil, refuse("the token carries no valid principal, tenant and roles claims")
	}
	id.Principal, id.Tenant, id.Roles = principal, tenant, roles
	return id, nil
}

var errNoIssuers = errors.New("no identity issuers: every token is refused")
