namespace Broker.JetStream.Internal.Api;

/// <summary>The JetStream subjects (<c>jetstream_api.go</c>) and the tokens of an API subject.</summary>
internal static class ApiSubjects
{
    public const string All = "$JS.API.>";
    public const string Prefix = "$JS.API.";
    public const string RequestNextPrefix = "$JS.API.CONSUMER.MSG.NEXT.";
    public const string DirectGetPrefix = "$JS.API.DIRECT.GET.";
    public const string AckPrefix = "$JS.ACK.";
    public const string FlowControlPrefix = "$JS.FC.";
    public const string AdvisoryPrefix = "$JS.EVENT.ADVISORY.";

    /// <summary>Splits on '.'.</summary>
    public static string[] Tokens(string subject) => subject.Split('.');

    /// <summary>A stream or consumer name nats-server accepts (<c>isValidName</c>): non-empty, no whitespace, '.', '*' or '>'.</summary>
    public static bool IsValidName(string? name) => !string.IsNullOrEmpty(name) && name.AsSpan().IndexOfAny(NameForbidden) < 0;

    private static readonly System.Buffers.SearchValues<char> NameForbidden = System.Buffers.SearchValues.Create(" \t\r\n\f.*>");
}
