namespace Broker.Host.Configuration.Conf;

// The states of values that start with a digit or '-': integers (with size suffixes), floats,
// ISO-8601 dates, IP addresses and host:port pairs, and words that merely start with a digit.
internal sealed partial class ConfLexer
{
    private const string DatePattern = "00-00T00:00:00Z"; // what follows "YYYY-"; '0' is any digit

    private State NumberStart()
    {
        var c = Read();
        if (!char.IsDigit(c))
        {
            throw Fail(Last, c == '.' ? "Floats must start with a digit, not '.'." : $"Expected a digit but got {Describe(c)}.");
        }
        return State.Number;
    }

    // Digits so far. What comes next decides: '-' a date, '.' a float or address, k/m/g/t/p/e a
    // size, a terminator an integer, anything else a string.
    private State Number()
    {
        var c = Read();
        if (c == '-')
        {
            return pos - start == 5 ? State.DateAfterYear : throw Fail(Last, "All ISO8601 dates must be in full Zulu form.");
        }
        if (char.IsDigit(c))
        {
            return State.Number;
        }
        if (c == '.')
        {
            return State.FloatStart;
        }
        if (IsSizeSuffix(c))
        {
            return State.ConvenientNumber;
        }
        if (!EndsNumber(c))
        {
            // nats-server keeps this character in the string without looking at it again, so a
            // "1]" closing an array becomes the string "1]" and the array stays open.
            stringState = State.String;
            return State.String;
        }
        Backup();
        Emit(ConfTokenKind.Integer);
        return Pop();
    }

    // After a size letter: more 'b'/'i' letters (kb, KiB, ...), then a terminator or a digit ends
    // the integer; anything else makes the whole word a string ("1Ghz", "2Pie").
    private State ConvenientNumber()
    {
        var c = Read();
        if (c is 'b' or 'B' or 'i' or 'I')
        {
            return State.ConvenientNumber;
        }
        Backup();
        if (EndsNumber(c) || char.IsDigit(c))
        {
            Emit(ConfTokenKind.Integer);
            return Pop();
        }
        stringState = State.String;
        return State.String;
    }

    // "YYYY-" has been read; the rest must be "MM-DDTHH:MM:SSZ" exactly.
    private State DateAfterYear()
    {
        foreach (var expected in DatePattern)
        {
            var c = Read();
            if (expected == '0')
            {
                if (!char.IsDigit(c))
                {
                    throw Fail(Last, $"Expected digit in ISO8601 datetime, but found {Describe(c)} instead.");
                }
            }
            else if (c != expected)
            {
                throw Fail(Last, $"Expected {Describe(expected)} in ISO8601 datetime, but found {Describe(c)} instead.");
            }
        }
        Emit(ConfTokenKind.DateTime);
        return Pop();
    }

    // '-' has been read: a digit must follow.
    private State NegNumberStart()
    {
        var c = Read();
        if (!char.IsDigit(c))
        {
            throw Fail(Last, c == '.' ? "Floats must start with a digit, not '.'." : $"Expected a digit but got {Describe(c)}.");
        }
        return State.NegNumber;
    }

    // A negative number never turns into a string: whatever ends the digits ends the integer.
    private State NegNumber()
    {
        var c = Read();
        if (char.IsDigit(c))
        {
            return State.NegNumber;
        }
        if (c == '.')
        {
            return State.FloatStart;
        }
        if (IsSizeSuffix(c))
        {
            return State.ConvenientNumber;
        }
        Backup();
        Emit(ConfTokenKind.Integer);
        return Pop();
    }

    private State FloatStart()
    {
        var c = Read();
        return char.IsDigit(c)
            ? State.Float
            : throw Fail(Last, $"Floats must have a digit after the '.', but got {Describe(c)} instead.");
    }

    // A second '.' means it was an address after all (127.0.0.1).
    private State Float()
    {
        var c = Read();
        if (char.IsDigit(c))
        {
            return State.Float;
        }
        if (c == '.')
        {
            return State.IPAddr;
        }
        Backup();
        Emit(ConfTokenKind.Float);
        return Pop();
    }

    // Digits, '.', ':' and '-' continue an address: 127.0.0.1:4222.
    private State IPAddr()
    {
        var c = Read();
        if (char.IsDigit(c) || c is '.' or ':' or '-')
        {
            return State.IPAddr;
        }
        Backup();
        Emit(ConfTokenKind.String);
        return Pop();
    }

    private static bool IsSizeSuffix(char c) => c is 'k' or 'K' or 'm' or 'M' or 'g' or 'G' or 't' or 'T' or 'p' or 'P' or 'e' or 'E';

    // What ends an integer; note that ']' is not among them in nats-server.
    private static bool EndsNumber(char c) => c is '\n' or '\r' or Eof or '}' or ';' or ',' or ' ' or '\t';
}
