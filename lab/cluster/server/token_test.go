package main

// Tokens at the frontend are verified as the workers verify them: each refusal below has a control (the same
// token, valid) that is accepted, so a verifier that refused everything fails.

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/server/common/authorization"
)

type testIssuer struct {
	pub  ed25519.PublicKey
	priv ed25519.PrivateKey
	kid  string
}

func newTestIssuer(t *testing.T) testIssuer {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testIssuer{pub: pub, priv: priv, kid: "k1"}
}

func (ti testIssuer) file(extra map[string]any) []byte {
	cfg := map[string]any{
		"issuer":   "iss-1",
		"audience": "ledgerloop",
		"jwks":     map[string]any{"keys": []any{map[string]any{"kty": "OKP", "crv": "Ed25519", "kid": ti.kid, "x": base64.RawURLEncoding.EncodeToString(ti.pub)}}},
		"mapping":  "claims",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	b, _ := json.Marshal(cfg)
	return b
}

func (ti testIssuer) sign(t *testing.T, header, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return input + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(ti.priv, []byte(input)))
}

func validClaims(now time.Time) map[string]any {
	return map[string]any{
		"iss": "iss-1", "aud": "ledgerloop", "sub": "user:alice", "iat": now.Unix(), "exp": now.Unix() + 600,
		"principal": "user:alice", "tenant": "acme", "roles": []string{"starter"},
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for key, val := range m {
		out[key] = val
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func TestTokensVerifyLikeTheWorkers(t *testing.T) {
	ti := newTestIssuer(t)
	issuers, err := parseIssuers(ti.file(nil))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	hdr := map[string]any{"alg": "EdDSA", "kid": "k1", "typ": "JWT"}
	good := ti.sign(t, hdr, validClaims(now))
	other := newTestIssuer(t)

	id, err := verifyToken(issuers, good, now)
	if err != nil {
		t.Fatalf("control: a valid token was refused: %v", err)
	}
	if id.Principal != "user:alice" || id.Tenant != "acme" || len(id.Roles) != 1 || id.Roles[0] != "starter" {
		t.Fatalf("control: wrong identity %+v", id)
	}
	// An audience list that names ours is accepted too.
	if _, err := verifyToken(issuers, ti.sign(t, hdr, with(validClaims(now), "aud", []string{"x", "ledgerloop"})), now); err != nil {
		t.Fatalf("control: an audience list was refused: %v", err)
	}

	for _, c := range []struct {
		name  string
		token string
		at    time.Time
		why   string
	}{
		{"expired", good, now.Add(11 * time.Minute), "expired"},
		{"signed by another key", other.sign(t, hdr, validClaims(now)), now, "signature"},
		{"unknown kid", ti.sign(t, with(hdr, "kid", "k2"), validClaims(now)), now, "unknown kid"},
		{"not EdDSA", ti.sign(t, with(hdr, "alg", "none"), validClaims(now)), now, "EdDSA"},
		{"another issuer", ti.sign(t, hdr, with(validClaims(now), "iss", "iss-2")), now, "issuer"},
		{"another audience", ti.sign(t, hdr, with(validClaims(now), "aud", "console")), now, "aud"},
		{"too long a lifetime", ti.sign(t, hdr, with(validClaims(now), "exp", now.Unix()+86_401)), now, "longer"},
		{"issued in the future", ti.sign(t, hdr, with(with(validClaims(now), "iat", now.Unix()+120), "exp", now.Unix()+600)), now, "future"},
		{"no subject", ti.sign(t, hdr, with(validClaims(now), "sub", nil)), now, "subject"},
		{"no tenant claim", ti.sign(t, hdr, with(validClaims(now), "tenant", nil)), now, "tenant"},
		{"roles not strings", ti.sign(t, hdr, with(validClaims(now), "roles", []any{1})), now, "roles"},
		{"tampered payload", strings.Replace(good, ".", ".x", 1), now, ""},
		{"not a JWS", "abc", now, "compact"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := verifyToken(issuers, c.token, c.at)
			if err == nil {
				t.Fatal("accepted")
			}
			if c.why != "" && !strings.Contains(err.Error(), c.why) {
				t.Fatalf("error %q does not say %q", err, c.why)
			}
			if strings.Contains(err.Error(), c.token) {
				t.Fatal("the error repeats the token")
			}
		})
	}
}

func TestSubjectMappingAndTheIssuersFile(t *testing.T) {
	ti := newTestIssuer(t)
	issuers, err := parseIssuers(ti.file(map[string]any{
		"mapping":  "subjects",
		"subjects": map[string]any{"alice": map[string]any{"principal": "user:alice", "tenant": "acme", "roles": []string{"starter"}}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	hdr := map[string]any{"alg": "EdDSA", "kid": "k1"}
	id, err := verifyToken(issuers, ti.sign(t, hdr, with(validClaims(now), "sub", "alice")), now)
	if err != nil || id.Principal != "user:alice" {
		t.Fatalf("control: a listed subject was refused: %v", err)
	}
	// With subject mapping, the token's own principal/tenant claims count for nothing.
	if _, err := verifyToken(issuers, ti.sign(t, hdr, with(validClaims(now), "sub", "mallory")), now); err == nil {
		t.Fatal("an unlisted subject was accepted on its own claims")
	}

	for name, file := range map[string][]byte{
		"a private key":      ti.file(map[string]any{"jwks": map[string]any{"keys": []any{map[string]any{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "x": base64.RawURLEncoding.EncodeToString(ti.pub), "d": "secret"}}}}),
		"an unknown field":   ti.file(map[string]any{"permissions": []string{"default:admin"}}),
		"no keys":            ti.file(map[string]any{"jwks": map[string]any{"keys": []any{}}}),
		"an RSA key":         ti.file(map[string]any{"jwks": map[string]any{"keys": []any{map[string]any{"kty": "RSA", "kid": "k1", "n": "x", "e": "AQAB"}}}}),
		"not JSON":           []byte("{"),
		"an empty list":      []byte("[]"),
		"a duplicate issuer": []byte("[" + string(ti.file(nil)) + "," + string(ti.file(nil)) + "]"),
	} {
		if _, err := parseIssuers(file); err == nil {
			t.Errorf("an issuers file with %s was accepted", name)
		}
	}
}

func TestTheClaimMapperRefusesABadTokenAndReadsARotatedFile(t *testing.T) {
	ti := newTestIssuer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "issuers.json")
	if err := os.WriteFile(path, ti.file(nil), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := newIssuerSource(path)
	if err != nil {
		t.Fatal(err)
	}
	m := newClaimMapper(src, "")
	now := time.Now()
	token := ti.sign(t, map[string]any{"alg": "EdDSA", "kid": "k1"}, validClaims(now))

	claims, err := m.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer " + token})
	if err != nil {
		t.Fatalf("control: a valid bearer token was refused: %v", err)
	}
	if c := claims.Extensions.(*caller); c.Tenant != "acme" || c.Via != "token" {
		t.Fatalf("wrong caller %+v", c)
	}
	if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: "Basic " + token}); err == nil {
		t.Fatal("a non-Bearer authorization header was accepted")
	}
	if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer " + token + "x"}); err == nil {
		t.Fatal("a tampered token was accepted")
	}
	// The key is rotated: the old token no longer verifies, a token of the new key does.
	rotated := newTestIssuer(t)
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(path, rotated.file(nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer " + token}); err == nil {
		t.Fatal("a token of the retired key was accepted after the rotation")
	}
	if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer " + rotated.sign(t, map[string]any{"alg": "EdDSA", "kid": "k1"}, validClaims(now))}); err != nil {
		t.Fatalf("control: a token of the new key was refused: %v", err)
	}
	// The file disappears: every token is refused (fail closed).
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: "Bearer " + token}); err == nil {
		t.Fatal("a token was accepted without an issuers file")
	}
}
