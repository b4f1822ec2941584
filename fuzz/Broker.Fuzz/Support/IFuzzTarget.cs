namespace Broker.Fuzz.Support;

/// <summary>
/// One fuzz target: runs a parser over <see cref="Run"/>'s input and checks its invariants. The parser's own error
/// (its documented exception or error status) is an expected outcome; any other exception, and any
/// <see cref="InvariantViolation"/>, is a crash that afl records.
/// </summary>
internal interface IFuzzTarget
{
    /// <summary>The name scripts and tests select the target by; also its corpus folder under fuzz/corpus.</summary>
    string Name { get; }

    void Run(ReadOnlySpan<byte> input);
}

/// <summary>A parser broke one of the invariants its target checks (not merely refused bad input).</summary>
internal sealed class InvariantViolation : Exception
{
    public InvariantViolation(string message)
        : base(message)
    {
    }

    public InvariantViolation()
    {
    }

    public InvariantViolation(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    public static void Check(bool condition, string message)
    {
        if (!condition)
        {
            throw new InvariantViolation(message);
        }
    }
}
