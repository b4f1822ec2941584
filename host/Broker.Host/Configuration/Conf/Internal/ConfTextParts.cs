using System.Text;

namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// The text of a string token that holds escapes, collected part by part: plain text between escapes, decoded
/// characters, and the bytes of <c>\xHH</c> escapes.
/// </summary>
/// <remarks>
/// Go strings hold bytes, so <c>"\xc3\xa9"</c> is <c>"é"</c>; consecutive <c>\x</c> bytes are therefore decoded
/// together as UTF-8, and bytes that are not UTF-8 fall back to one character each (Latin-1). Only text between
/// escapes, or another escape, interrupts a run of bytes.
/// </remarks>
internal sealed class ConfTextParts
{
    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    private readonly StringBuilder text = new();
    private List<byte>? bytes;

    /// <summary>Whether the pending token has escaped parts (its text is then <see cref="Take"/>'s, not the input's).</summary>
    public bool HasParts { get; private set; }

    /// <summary>Adds the plain text read before an escape; empty text only marks that the token has parts.</summary>
    public void AddText(ReadOnlySpan<char> plain)
    {
        if (plain.Length > 0)
        {
            FlushBytes();
            text.Append(plain);
        }

        HasParts = true;
    }

    /// <summary>Adds a character an escape stands for (<c>\t</c>, <c>\n</c>, ...).</summary>
    public void AddChar(char decoded)
    {
        FlushBytes();
        text.Append(decoded);
        HasParts = true;
    }

    /// <summary>Adds the byte of a <c>\xHH</c> escape.</summary>
    public void AddByte(byte value)
    {
        (bytes ??= []).Add(value);
        HasParts = true;
    }

    /// <summary>The whole text: the parts collected so far and <paramref name="tail"/>; starts over for the next token.</summary>
    public string Take(ReadOnlySpan<char> tail)
    {
        FlushBytes();
        text.Append(tail);
        var whole = text.ToString();
        text.Clear();
        HasParts = false;
        return whole;
    }

    private void FlushBytes()
    {
        if (bytes is not { Count: > 0 })
        {
            return;
        }

        var run = bytes.ToArray();
        bytes.Clear();
        try
        {
            text.Append(StrictUtf8.GetString(run));
        }
        catch (DecoderFallbackException)
        {
            text.Append(Encoding.Latin1.GetString(run));
        }
    }
}
