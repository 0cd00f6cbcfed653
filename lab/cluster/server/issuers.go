package main

// The identity issuers the frontend trusts: the same JSON file the workers read (LEDGERLOOP_IDENTITY_ISSUERS,
// src/identity/config.ts), one issuer object or a list. Public keys only: a file holding a private key (`d`) is
// refused, so the server never starts with a signing key beside it.

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

const (
	defaultMaxLifetimeSec = 86_400
	maxMaxLifetimeSec     = 7 * 86_400
)

type subjectMapping struct {
	Principal string   `json:"principal"`
	Tenant    string   `json:"tenant"`
	Roles     []string `json:"roles"`
}

type issuerJSON struct {
	Issuer   string `json:"issuer"`
	Audience string `json:"audience"`
	JWKS     struct {
		Keys []map[string]any `json:"keys"`
	} `json:"jwks"`
	Mapping        string                    `json:"mapping"`
	Subjects       map[string]subjectMapping `json:"subjects"`
	MaxLifetimeSec *int64                    `json:"maxLifetimeSec"`
}

// issuer is one validated issuer: its name, audience, public keys by kid and how subjects map to principals.
type issuer struct {
	name           string
	audience       string
	keys           map[string]ed25519.PublicKey
	mapClaims      bool
	subjects       map[string]subjectMapping
	maxLifetimeSec int64
}

func stringField(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func parseIssuer(raw json.RawMessage, i int) (*issuer, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var j issuerJSON
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("issuer %d: %v", i, err)
	}
	if j.Issuer == "" || j.Audience == "" {
		return nil, fmt.Errorf("issuer %d: `issuer` and `audience` are required", i)
	}
	if len(j.JWKS.Keys) == 0 {
		return nil, fmt.Errorf("issuer %s: no keys", j.Issuer)
	}
	is := &issuer{name: j.Issuer, audience: j.Audience, keys: map[string]ed25519.PublicKey{}, subjects: j.Subjects}
	for _, k := range j.JWKS.Keys {
		if _, private := k["d"]; private {
			return nil, fmt.Errorf("issuer %s: an issuer key set holds public keys only (found a private key `d`)", j.Issuer)
		}
		kid := stringField(k, "kid")
		if stringField(k, "kty") != "OKP" || stringField(k, "crv") != "Ed25519" || kid == "" {
			return nil, fmt.Errorf("issuer %s: every key must be an Ed25519 OKP key with a kid", j.Issuer)
		}
		x, err := base64.RawURLEncoding.DecodeString(stringField(k, "x"))
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("issuer %s: key %s: `x` is not a 32-byte base64url public key", j.Issuer, kid)
		}
		if _, dup := is.keys[kid]; dup {
			return nil, fmt.Errorf("issuer %s: two keys share kid %s", j.Issuer, kid)
		}
		is.keys[kid] = ed25519.PublicKey(x)
	}
	switch j.Mapping {
	case "", "subjects":
	case "claims":
		is.mapClaims = true
	default:
		return nil, fmt.Errorf("issuer %s: mapping must be subjects or claims", j.Issuer)
	}
	is.maxLifetimeSec = defaultMaxLifetimeSec
	if j.MaxLifetimeSec != nil {
		if *j.MaxLifetimeSec <= 0 || *j.MaxLifetimeSec > maxMaxLifetimeSec {
			return nil, fmt.Errorf("issuer %s: maxLifetimeSec must be 1..%d", j.Issuer, maxMaxLifetimeSec)
		}
		is.maxLifetimeSec = *j.MaxLifetimeSec
	}
	return is, nil
}

// parseIssuers reads one issuer object or a list of them.
func parseIssuers(data []byte) ([]*issuer, error) {
	trimmed := bytes.TrimSpace(data)
	var raws []json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, fmt.Errorf("identity issuers are not JSON: %v", err)
		}
	} else {
		raws = []json.RawMessage{trimmed}
	}
	if len(raws) == 0 {
		return nil, errors.New("identity issuers: the list is empty")
	}
	seen := map[string]bool{}
	out := make([]*issuer, 0, len(raws))
	for i, raw := range raws {
		is, err := parseIssuer(raw, i)
		if err != nil {
			return nil, fmt.Errorf("identity issuers invalid: %v", err)
		}
		if seen[is.name] {
			return nil, fmt.Errorf("identity issuers invalid: two issuers share %q", is.name)
		}
		seen[is.name] = true
		out = append(out, is)
	}
	return out, nil
}

// issuerSource reads the issuers file again whenever it changes (a rotated key set takes effect without a
// restart). A file that becomes unreadable or invalid refuses every token until it is fixed: fail closed.
type issuerSource struct {
	path    string
	mu      sync.Mutex
	modTime time.Time
	size    int64
	issuers []*issuer
	err     error
}

func newIssuerSource(path string) (*issuerSource, error) {
	s := &issuerSource{path: path}
	if _, err := s.current(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *issuerSource) current() ([]*issuer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := os.Stat(s.path)
	if err != nil {
		s.issuers, s.err, s.modTime = nil, fmt.Errorf("identity issuers unreadable (%s)", s.path), time.Time{}
		return nil, s.err
	}
	if s.issuers != nil && st.ModTime().Equal(s.modTime) && st.Size() == s.size {
		return s.issuers, nil
	}
	data, err := os.ReadFile(s.path)
	if err == nil {
		s.issuers, s.err = parseIssuers(data)
	} else {
		s.issuers, s.err = nil, fmt.Errorf("identity issuers unreadable (%s)", s.path)
	}
	s.modTime, s.size = st.ModTime(), st.Size()
	return s.issuers, s.err
}

// staticIssuers is a source for tests.
type staticIssuers []*issuer

func (s staticIssuers) current() ([]*issuer, error) { return s, nil }

type issuerProvider interface {
	current() ([]*issuer, error)
}
