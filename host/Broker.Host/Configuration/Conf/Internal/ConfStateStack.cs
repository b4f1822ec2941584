namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// Where the lexer returns after a value or an include: values appear at the top level, in arrays and in maps, and
/// what may follow one depends on where it is (nats-server's <c>lx.stack</c>).
/// </summary>
/// <param name="cursor">Where a pop without a state is reported.</param>
internal sealed class ConfStateStack(ConfCursor cursor)
{
    private readonly Stack<ConfLexState> states = new();

    /// <summary>Remembers the state that follows the value about to be read.</summary>
    public void Push(ConfLexState next) => states.Push(next);

    /// <summary>The state that follows the value just read.</summary>
    public ConfLexState Pop() =>
        states.TryPop(out var next) ? next : throw cursor.Fail(cursor.Position, "BUG in lexer: no states to pop.");
}
