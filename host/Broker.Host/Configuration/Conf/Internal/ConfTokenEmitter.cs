namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// The token the lexer hands out next: where it starts in the source (quotes and brackets included) and, once
/// emitted, the token itself until <see cref="TryTake"/> takes it. The end of input is never taken away.
/// </summary>
/// <param name="cursor">The text read; an emitted token takes the pending text and the cursor starts the next one.</param>
/// <param name="parts">The escaped parts of the pending token, when it has any.</param>
internal sealed class ConfTokenEmitter(ConfCursor cursor, ConfTextParts parts)
{
    private int origin;
    private ConfToken? pending;

    /// <summary>Sets where the pending token starts in the source; its position is reported there.</summary>
    public void MarkOrigin(int index) => origin = index;

    /// <summary>Emits the pending text (escaped parts included) as a token of <paramref name="kind"/>.</summary>
    public void Emit(ConfTokenKind kind)
    {
        var text = parts.HasParts ? parts.Take(cursor.Pending()) : cursor.PendingText;
        pending = new ConfToken(kind, text, cursor.PositionOf(origin));
        cursor.Ignore();
    }

    /// <summary>Emits a closing bracket that has just been read (<c>]</c>, <c>}</c>), with no text.</summary>
    public void EmitClosing(ConfTokenKind kind)
    {
        cursor.Ignore();
        origin = cursor.Position - 1;
        Emit(kind);
    }

    /// <summary>Emits the end of input, at the cursor.</summary>
    /// <returns><see cref="ConfLexState.Done"/>: nothing follows the end.</returns>
    public ConfLexState EmitEof()
    {
        pending = new ConfToken(ConfTokenKind.Eof, string.Empty, cursor.PositionOf(cursor.Position));
        return ConfLexState.Done;
    }

    /// <summary>Takes the emitted token, if any; the end of input stays for the next call.</summary>
    public bool TryTake(out ConfToken token)
    {
        if (pending is not { } emitted)
        {
            token = default;
            return false;
        }

        token = emitted;
        if (emitted.Kind != ConfTokenKind.Eof)
        {
            pending = null;
        }

        return true;
    }
}
