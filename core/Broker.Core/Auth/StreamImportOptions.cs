namespace Broker.Core.Auth;

/// <summary>
/// One stream import of an account (nats-server's <c>imports: [{ stream: { account: A, subject: "orders.>" },
/// prefix: "p" }]</c>): messages published in <see cref="Account"/> on <see cref="Subject"/> reach this account's
/// subscribers, under <see cref="Prefix"/> + the subject or under <see cref="To"/>.
/// </summary>
public sealed class StreamImportOptions
{
    /// <summary>The exporting account. Required; it must export a stream covering <see cref="Subject"/> to this account.</summary>
    public string Account { get; set; } = "";

    /// <summary>The imported subject in the exporting account; may hold wildcards. Required.</summary>
    public string Subject { get; set; } = "";

    /// <summary>
    /// A literal prefix put before the subject in this account (<c>p</c> makes <c>orders.1</c> arrive as
    /// <c>p.orders.1</c>). Default none. Not together with <see cref="To"/>.
    /// </summary>
    public string? Prefix { get; set; }

    /// <summary>
    /// The subject the messages arrive under in this account; its wildcards take the published subject's tokens in
    /// order, or <c>$N</c> / <c>{{wildcard(N)}}</c> names the Nth. Default: the imported subject itself. Not together
    /// with <see cref="Prefix"/>.
    /// </summary>
    public string? To { get; set; }

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public StreamImportOptions Clone() => (StreamImportOptions)MemberwiseClone();
}
