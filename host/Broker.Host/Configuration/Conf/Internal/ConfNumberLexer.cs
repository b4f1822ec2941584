using static Broker.Host.Configuration.Conf.Internal.ConfChars;

namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// The states of values that start with a digit or <c>-</c>: integers (with size suffixes), floats, ISO-8601 dates,
/// IP addresses and host:port pairs, and words that merely start with a digit (handed on as bare strings).
/// </summary>
/// <param name="cursor">The text.</param>
/// <param name="tokens">Where numbers are emitted.</param>
/// <param name="stack">What follows the number.</param>
internal sealed class ConfNumberLexer(ConfCursor cursor, ConfTokenEmitter tokens, ConfStateStack stack)
{
    private const string DatePattern = "00-00T00:00:00Z"; // what follows "YYYY-"; '0' is any digit

    /// <summary>The first digit.</summary>
    public ConfLexState NumberStart()
    {
        var c = cursor.Read();
        if (!char.IsDigit(c))
        {
            throw cursor.Fail(cursor.Last, c == '.' ? "Floats must start with a digit, not '.'." : $"Expected a digit but got {Describe(c)}.");
        }

        return ConfLexState.Number;
    }

    /// <summary>
    /// Digits so far. What comes next decides: <c>-</c> a date, <c>.</c> a float or address, k/m/g/t/p/e a size, a
    /// terminator an integer, anything else a string.
    /// </summary>
    public ConfLexState Number()
    {
        var c = cursor.Read();
        if (c == '-')
        {
            return cursor.PendingLength == 5 ? ConfLexState.DateAfterYear : throw cursor.Fail(cursor.Last, "All ISO8601 dates must be in full Zulu form.");
        }

        if (char.IsDigit(c))
        {
            return ConfLexState.Number;
        }

        if (c == '.')
        {
            return ConfLexState.FloatStart;
        }

        if (IsSizeSuffix(c))
        {
            return ConfLexState.ConvenientNumber;
        }

        if (!EndsNumber(c))
        {
            // nats-server keeps this character in the string without looking at it again, so a "1]" closing an array
            // becomes the string "1]" and the array stays open.
            return ConfLexState.String;
        }

        cursor.Backup();
        tokens.Emit(ConfTokenKind.Integer);
        return stack.Pop();
    }

    /// <summary>
    /// After a size letter: more <c>b</c>/<c>i</c> letters (kb, KiB, ...), then a terminator or a digit ends the
    /// integer; anything else makes the whole word a string (<c>1Ghz</c>, <c>2Pie</c>).
    /// </summary>
    public ConfLexState ConvenientNumber()
    {
        var c = cursor.Read();
        if (c is 'b' or 'B' or 'i' or 'I')
        {
            return ConfLexState.ConvenientNumber;
        }

        cursor.Backup();
        if (EndsNumber(c) || char.IsDigit(c))
        {
            tokens.Emit(ConfTokenKind.Integer);
            return stack.Pop();
        }

        return ConfLexState.String;
    }

    /// <summary><c>YYYY-</c> has been read; the rest must be <c>MM-DDTHH:MM:SSZ</c> exactly.</summary>
    public ConfLexState DateAfterYear()
    {
        foreach (var expected in DatePattern)
        {
            var c = cursor.Read();
            if (expected == '0')
            {
                if (!char.IsDigit(c))
                {
                    throw cursor.Fail(cursor.Last, $"Expected digit in ISO8601 datetime, but found {Describe(c)} instead.");
                }
            }
            else if (c != expected)
            {
                throw cursor.Fail(cursor.Last, $"Expected {Describe(expected)} in ISO8601 datetime, but found {Describe(c)} instead.");
            }
        }

        tokens.Emit(ConfTokenKind.DateTime);
        return stack.Pop();
    }

    /// <summary><c>-</c> has been read: a digit must follow.</summary>
    public ConfLexState NegNumberStart()
    {
        var c = cursor.Read();
        if (!char.IsDigit(c))
        {
            throw cursor.Fail(cursor.Last, c == '.' ? "Floats must start with a digit, not '.'." : $"Expected a digit but got {Describe(c)}.");
        }

        return ConfLexState.NegNumber;
    }

    /// <summary>A negative number never turns into a string: whatever ends the digits ends the integer.</summary>
    public ConfLexState NegNumber()
    {
        var c = cursor.Read();
        if (char.IsDigit(c))
        {
            return ConfLexState.NegNumber;
        }

        if (c == '.')
        {
            return ConfLexState.FloatStart;
        }

        if (IsSizeSuffix(c))
        {
            return ConfLexState.ConvenientNumber;
        }

        cursor.Backup();
        tokens.Emit(ConfTokenKind.Integer);
        return stack.Pop();
    }

    /// <summary>A <c>.</c> after digits: a digit must follow.</summary>
    public ConfLexState FloatStart()
    {
        var c = cursor.Read();
        return char.IsDigit(c)
            ? ConfLexState.Float
            : throw cursor.Fail(cursor.Last, $"Floats must have a digit after the '.', but got {Describe(c)} instead.");
    }

    /// <summary>Digits after the point. A second <c>.</c> means it was an address after all (127.0.0.1).</summary>
    public ConfLexState Float()
    {
        var c = cursor.Read();
        if (char.IsDigit(c))
        {
            return ConfLexState.Float;
        }

        if (c == '.')
        {
            return ConfLexState.IPAddr;
        }

        cursor.Backup();
        tokens.Emit(ConfTokenKind.Float);
        return stack.Pop();
    }

    /// <summary>Digits, <c>.</c>, <c>:</c> and <c>-</c> continue an address: 127.0.0.1:4222.</summary>
    public ConfLexState IPAddr()
    {
        var c = cursor.Read();
        if (char.IsDigit(c) || c is '.' or ':' or '-')
        {
            return ConfLexState.IPAddr;
        }

        cursor.Backup();
        tokens.Emit(ConfTokenKind.String);
        return stack.Pop();
    }

    private static bool IsSizeSuffix(char c) => c is 'k' or 'K' or 'm' or 'M' or 'g' or 'G' or 't' or 'T' or 'p' or 'P' or 'e' or 'E';

    // What ends an integer; note that ']' is not among them in nats-server.
    private static bool EndsNumber(char c) => c is '\n' or '\r' or Eof or '}' or ';' or ',' or ' ' or '\t';
}
