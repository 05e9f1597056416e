package config

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/auth"
)

// parseAuth reads `auth: {tokens: [{name, sha256, scopes, tenant}]}`.
func parseAuth(file string, v *yaml.Node) (auth.Config, ErrorList) {
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	var out auth.Config
	if v.Kind != yaml.MappingNode {
		add(v, "auth: expected a mapping with tokens")
		return out, errs
	}
	names := map[string]bool{}
	sums := map[[32]byte]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, list := v.Content[i], v.Content[i+1]
		if k.Value == "clients" {
			cls, cerrs := parseClients(file, list)
			errs = append(errs, cerrs...)
			out.Clients = cls
			continue
		}
		if k.Value != "tokens" {
			add(k, "auth: unknown key %q (want tokens, clients)", k.Value)
			continue
		}
		if list.Kind != yaml.SequenceNode {
			add(list, "auth.tokens: expected a list of {name, sha256, scopes, tenant}")
			continue
		}
		for j, n := range list.Content {
			where := fmt.Sprintf("auth.tokens[%d]", j)
			var e struct {
				Name   string   `yaml:"name"`
				SHA256 string   `yaml:"sha256"`
				Scopes []string `yaml:"scopes"`
				Tenant string   `yaml:"tenant"`
			}
			if n.Kind != yaml.MappingNode {
				add(n, "%s: expected {name, sha256, scopes, tenant}", where)
				continue
			}
			for m := 0; m+1 < len(n.Content); m += 2 {
				switch key := n.Content[m].Value; key {
				case "name", "sha256", "scopes", "tenant":
				case "token":
					add(n.Content[m], "%s: token: the config holds the token's sha256, never the token (warden token new prints it)", where)
				default:
					add(n.Content[m], "%s: unknown key %q (want name, sha256, scopes, tenant)", where, key)
				}
			}
			if err := n.Decode(&e); err != nil {
				add(n, "%s: expected {name: string, sha256: string, scopes: [..], tenant: string}", where)
				continue
			}
			tok := auth.Token{Name: e.Name, Tenant: e.Tenant}
			switch {
			case e.Name == "":
				add(n, "%s: name is required", where)
			case !validName(e.Name):
				add(n, "%s: name %q: a name may hold letters, digits, '-', '_' and '.'", where, e.Name)
			case names[e.Name]:
				add(n, "%s: name %q is used by another token", where, e.Name)
			}
			names[e.Name] = true
			if e.Tenant != "" && !validName(e.Tenant) {
				add(n, "%s: tenant %q: a name may hold letters, digits, '-', '_' and '.'", where, e.Tenant)
			}
			sum, err := auth.ParseHash(e.SHA256)
			if err != nil {
				add(n, "%s: sha256: %v", where, err)
			} else if other, dup := sums[sum]; dup {
				add(n, "%s: sha256 is the same as token %q's (one token, one entry)", where, other)
			} else {
				sums[sum] = e.Name
			}
			tok.SHA256 = sum
			tok.Scopes = scopeList(n, where, e.Scopes, add)
			out.Tokens = append(out.Tokens, tok)
		}
	}
	return out, errs
}

// parseOrigins reads `origins: [...]`: browser origins allowed besides the
// same origin, each scheme://host[:port], kept in that canonical form.
func parseOrigins(file string, v *yaml.Node) ([]string, ErrorList) {
	var errs ErrorList
	var list []string
	if err := v.Decode(&list); err != nil {
		return nil, ErrorList{{File: file, Line: v.Line, Msg: "origins: expected a list of origins (scheme://host[:port])"}}
	}
	var out []string
	for _, o := range list {
		c, ok := auth.CanonicalOrigin(o)
		if !ok {
			errs = append(errs, Error{File: file, Line: v.Line,
				Msg: fmt.Sprintf("origins: %q is not an origin: expected http(s)://host[:port] with no path", o)})
			continue
		}
		out = append(out, c)
	}
	return out, errs
}

// parseClients reads auth.clients: [{subject, scopes, tenant}], the client
// certificates (verified by tls.client_ca) allowed in.
func parseClients(file string, list *yaml.Node) ([]auth.Client, ErrorList) {
	var errs ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, Error{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if list.Kind != yaml.SequenceNode {
		add(list, "auth.clients: expected a list of {subject, scopes, tenant}")
		return nil, errs
	}
	var out []auth.Client
	seen := map[string]bool{}
	for j, n := range list.Content {
		where := fmt.Sprintf("auth.clients[%d]", j)
		var e struct {
			Subject string   `yaml:"subject"`
			Scopes  []string `yaml:"scopes"`
			Tenant  string   `yaml:"tenant"`
		}
		if n.Kind != yaml.MappingNode || n.Decode(&e) != nil {
			add(n, "%s: expected {subject: string, scopes: [..], tenant: string}", where)
			continue
		}
		for m := 0; m+1 < len(n.Content); m += 2 {
			if key := n.Content[m].Value; key != "subject" && key != "scopes" && key != "tenant" {
				add(n.Content[m], "%s: unknown key %q (want subject, scopes, tenant)", where, key)
			}
		}
		cl := auth.Client{Subject: e.Subject, Tenant: e.Tenant}
		switch {
		case e.Subject == "":
			add(n, "%s: subject is required (a certificate subject, e.g. \"CN=payments-agent\")", where)
		case seen[e.Subject]:
			add(n, "%s: subject %q is listed twice", where, e.Subject)
		}
		seen[e.Subject] = true
		if e.Tenant != "" && !validName(e.Tenant) {
			add(n, "%s: tenant %q: a name may hold letters, digits, '-', '_' and '.'", where, e.Tenant)
		}
		cl.Scopes = scopeList(n, where, e.Scopes, add)
		out = append(out, cl)
	}
	return out, errs
}

// scopeList parses the scopes of a token or client entry (at least one,
// each known), reporting problems at n through add.
func scopeList(n *yaml.Node, where string, names []string, add func(*yaml.Node, string, ...any)) auth.Scope {
	if len(names) == 0 {
		add(n, "%s: scopes: expected at least one of %s", where, strings.Join(auth.ScopeNames(), ", "))
	}
	var out auth.Scope
	for _, s := range names {
		sc, err := auth.ParseScope(s)
		if err != nil {
			add(n, "%s: scopes: %v", where, err)
		}
		out |= sc
	}
	return out
}
