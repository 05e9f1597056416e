package detect

// ibanLengths is the ISO 13616 registry: country code and total IBAN length.
const ibanLengths = "AD24AE23AL28AT20AZ28BA20BE16BG22BH22BI27BR29BY28CH21CR22CY28CZ24" +
	"DE22DJ27DK18DO28EE20EG29ES24FI18FK18FO18FR27GB22GE22GI23GL18GR27GT28" +
	"HN28HR21HU28IE22IL23IQ23IS26IT27JO30KW30KZ20LB28LC32LI21LT20LU20LV21" +
	"LY25MC27MD24ME22MK19MN20MR27MT31MU30NI28NL18NO15OM23PK24PL28PS29PT25" +
	"QA29RO24RS22RU33SA24SC31SD18SE24SI19SK24SM27SO23ST25SV28TL23TN24TR26" +
	"UA29VA22VG24XK20YE30"

// ibanLen[a*26+b] is the IBAN length of country code a,b (0 if none).
var ibanLen [26 * 26]uint8

func init() {
	for i := 0; i+4 <= len(ibanLengths); i += 4 {
		e := ibanLengths[i : i+4]
		ibanLen[int(e[0]-'A')*26+int(e[1]-'A')] = (e[2]-'0')*10 + (e[3] - '0')
	}
}

// scanIBAN finds IBANs: a registered country code, two check digits and the
// BBAN, upper case, either compact or printed in groups of four separated by
// single spaces, of exactly the country's length and passing the mod-97
// check (ISO 7064 / ISO 13616).
func scanIBAN(s string, k *sink) {
	var buf [34]byte
	// Walk the digit runs: the check digits follow the country code.
	for d := nextNumber(s, 2); d+13 <= len(s); d = nextNumber(s, d+1) {
		i := d - 2
		if !isUpper(s[i]) || !isUpper(s[i+1]) || !isDigit(s[i+3]) {
			d = skipDigits(s, d) - 1
			continue
		}
		if i > 0 && isWord(s[i-1]) {
			continue
		}
		want := int(ibanLen[int(s[i]-'A')*26+int(s[i+1]-'A')])
		if want == 0 {
			continue
		}
		n, p := 0, i
		for p < len(s) && n < want {
			c := s[p]
			switch {
			case isUpper(c) || isDigit(c):
				buf[n] = c
				n++
				p++
				continue
			case c == ' ' && n%4 == 0 && p+1 < len(s) && (isUpper(s[p+1]) || isDigit(s[p+1])):
				p++
				continue
			}
			break
		}
		if n != want || (p < len(s) && isWord(s[p])) || !ibanChecksum(buf[:n]) {
			d = skipDigits(s, d) - 1
			continue
		}
		if !k.add(i, p) {
			return
		}
		d = p - 1
	}
}

// ibanChecksum validates the check digits: the IBAN rotated by four, letters
// as 10..35, must be 1 mod 97.
func ibanChecksum(b []byte) bool {
	if len(b) < 5 {
		return false
	}
	cd := int(b[2]-'0')*10 + int(b[3]-'0')
	if cd < 2 || cd > 98 {
		return false
	}
	rem := 0
	for j := 0; j < len(b); j++ {
		c := b[(j+4)%len(b)]
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A') + 10) % 97
		}
	}
	return rem == 1
}

// IBANValid reports whether s (spaces allowed) is a well-formed IBAN with a
// correct length for its country and valid check digits.
func IBANValid(s string) bool {
	t := sink{}
	scanIBAN(s, &t)
	return len(t.out) == 1 && t.out[0].Start == 0 && t.out[0].End == len(s)
}
