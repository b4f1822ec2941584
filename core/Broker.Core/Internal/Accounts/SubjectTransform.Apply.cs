using System.Text;

namespace Broker.Core.Internal.Accounts;

/// <summary>Applying a transform to a published subject, as nats-server's <c>transform.transform</c>, into a <see cref="MappingScratch"/>.</summary>
internal sealed partial class SubjectTransform
{
    private const uint FnvOffset = 2166136261;
    private const uint FnvPrime = 16777619;

    /// <summary>Whether the destination is written as configured, whatever the subject (a source without wildcards).</summary>
    public bool IsLiteral => parts is null;

    /// <summary>
    /// Writes the destination for <paramref name="subject"/>, split at <paramref name="tokens"/>, at the end of
    /// <paramref name="output"/>. The subject matched the source, so it has at least the source's tokens.
    /// </summary>
    public void Apply(ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens, MappingScratch output)
    {
        if (parts is null)
        {
            output.Append(destination);
            return;
        }

        var last = parts.Length - 1;
        for (var i = 0; i < parts.Length; i++)
        {
            var part = parts[i];
            switch (part.Kind)
            {
                case Kind.Literal:
                    if (part.Literal is [(byte)'>'])
                    {
                        goto rest;
                    }

                    output.Append(part.Literal);
                    break;
                case Kind.Wildcard:
                    output.Append(subject[tokens[part.Sources[0]]]);
                    break;
                case Kind.Partition:
                    Partition(subject, tokens, part, output);
                    break;
                case Kind.SplitFromLeft:
                    SplitAt(subject[tokens[part.Sources[0]]], part.Number, fromRight: false, output);
                    break;
                case Kind.SplitFromRight:
                    SplitAt(subject[tokens[part.Sources[0]]], part.Number, fromRight: true, output);
                    break;
                case Kind.SliceFromLeft:
                    SliceFromLeft(subject[tokens[part.Sources[0]]], part.Number, output);
                    break;
                case Kind.SliceFromRight:
                    SliceFromRight(subject[tokens[part.Sources[0]]], part.Number, output);
                    break;
                case Kind.Split:
                    Split(subject[tokens[part.Sources[0]]], part.Text, output);
                    break;
            }

            if (i < last)
            {
                output.Append((byte)'.');
            }
        }

    rest:
        if (appendsRest)
        {
            // The tokens '>' stood for, from the source's '>' on.
            for (var i = sourceTokenCount - 1; i < tokens.Length; i++)
            {
                output.Append(subject[tokens[i]]);
                if (i < tokens.Length - 1)
                {
                    output.Append((byte)'.');
                }
            }
        }
    }

    /// <summary>FNV-1a 32 over the tokens one after the other, modulo the partitions, in decimal (nats-server's getHashPartition).</summary>
    private static void Partition(ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens, Part part, MappingScratch output)
    {
        var hash = FnvOffset;
        foreach (var source in part.Sources)
        {
            foreach (var b in subject[tokens[source]])
            {
                hash = (hash ^ b) * FnvPrime;
            }
        }

        // Go converts the count to uint32 (a negative one wraps); with 0 nats-server's division panics, here it is partition 0.
        var partitions = unchecked((uint)part.Number);
        output.AppendNumber(partitions == 0 ? 0 : hash % partitions);
    }

    private static void SplitAt(ReadOnlySpan<byte> token, int position, bool fromRight, MappingScratch output)
    {
        if (position <= 0 || position >= token.Length)
        {
            output.Append(token);
            return;
        }

        var at = fromRight ? token.Length - position : position;
        output.Append(token[..at]);
        output.Append((byte)'.');
        output.Append(token[at..]);
    }

    private static void SliceFromLeft(ReadOnlySpan<byte> token, int size, MappingScratch output)
    {
        if (size <= 0 || size >= token.Length)
        {
            output.Append(token);
            return;
        }

        for (var i = 0; i + size <= token.Length; i += size)
        {
            if (i != 0)
            {
                output.Append((byte)'.');
            }

            output.Append(token.Slice(i, size));
            if (i + size != token.Length && i + size + size > token.Length)
            {
                output.Append((byte)'.');
                output.Append(token[(i + size)..]);
                break;
            }
        }
    }

    private static void SliceFromRight(ReadOnlySpan<byte> token, int size, MappingScratch output)
    {
        if (size <= 0 || size >= token.Length)
        {
            output.Append(token);
            return;
        }

        var remainder = token.Length % size;
        if (remainder > 0)
        {
            output.Append(token[..remainder]);
            output.Append((byte)'.');
        }

        for (var i = remainder; i + size <= token.Length; i += size)
        {
            output.Append(token.Slice(i, size));
            if (i + size < token.Length)
            {
                output.Append((byte)'.');
            }
        }
    }

    /// <summary>
    /// Go's <c>strings.Split</c> of the token at the separator, the pieces joined with '.' but empty ones left out as
    /// nats-server writes them: a separator is written only before a non-empty piece and not after an empty first one.
    /// </summary>
    private static void Split(ReadOnlySpan<byte> token, ReadOnlySpan<byte> separator, MappingScratch output)
    {
        var position = 0;
        var first = true;
        var piece = NextPiece(token, separator, ref position, out var more);
        while (true)
        {
            if (!piece.IsEmpty)
            {
                output.Append(piece);
            }

            if (!more)
            {
                return;
            }

            var next = NextPiece(token, separator, ref position, out var nextMore);
            if (!next.IsEmpty && !(first && piece.IsEmpty))
            {
                output.Append((byte)'.');
            }

            first = false;
            piece = next;
            more = nextMore;
        }
    }

    // The piece of Go's strings.Split starting at position; an empty separator splits after each UTF-8 sequence.
    private static ReadOnlySpan<byte> NextPiece(ReadOnlySpan<byte> token, ReadOnlySpan<byte> separator, ref int position, out bool more)
    {
        var rest = token[position..];
        int length;
        int skip;
        if (separator.IsEmpty)
        {
            length = rest.IsEmpty ? 0 : Rune.DecodeFromUtf8(rest, out _, out var consumed) == System.Buffers.OperationStatus.Done ? consumed : 1;
            skip = 0;
            more = position + length < token.Length;
        }
        else
        {
            var at = rest.IndexOf(separator);
            more = at >= 0;
            length = more ? at : rest.Length;
            skip = more ? separator.Length : 0;
        }

        position += length + skip;
        return rest[..length];
    }
}
