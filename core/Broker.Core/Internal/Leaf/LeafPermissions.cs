using Broker.Core.Internal.Auth;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// What a spoke may send over its link (nats-server's leaf <c>perms</c>): the hub's connect-info INFO tells it the
/// leaf user's <c>import</c> (what it may subscribe to, so which interest it may send) and <c>export</c> (what it may
/// publish, so which messages it may send); the remote's <c>deny_imports</c> and <c>deny_exports</c> and the JetStream
/// denies every non-system account's link gets (<c>denyAllClientJs</c>) are added to them. A link the broker accepted
/// as the hub takes the leaf user's permissions reversed (<see cref="ForSpoke"/>). Immutable; replaced as a whole.
/// </summary>
internal sealed class LeafPermissions
{
    // server/jetstream_api.go denyAllClientJs and denyAllJs, merged into both directions of every link.
    private static readonly string[] ClientJetStream = ["$JS.API.>", "$KV.>", "$OBJ.>"];
    private static readonly string[] SystemJetStream = ["$JSC.>", "$NRG.>", "$JS.API.>", "$KV.>", "$OBJ.>"];

    private readonly SubjectPatternSet? subscribeAllow;
    private readonly SubjectPatternSet subscribeDeny;
    private readonly SubjectPatternSet? publishAllow;
    private readonly SubjectPatternSet publishDeny;

    private LeafPermissions(SubjectPatternSet? subscribeAllow, SubjectPatternSet subscribeDeny, SubjectPatternSet? publishAllow, SubjectPatternSet publishDeny)
    {
        this.subscribeAllow = subscribeAllow;
        this.subscribeDeny = subscribeDeny;
        this.publishAllow = publishAllow;
        this.publishDeny = publishDeny;
    }

    /// <summary>The permissions of a link before the hub told its own: the remote's denies and the JetStream ones.</summary>
    /// <param name="remote">The remote's options (its <c>deny_imports</c> and <c>deny_exports</c>).</param>
    /// <param name="systemAccount">Whether the link is bound to the system account.</param>
    /// <param name="import">The hub's subscribe permissions for the link's user, when it sent them.</param>
    /// <param name="export">The hub's publish permissions for the link's user, when it sent them.</param>
    /// <param name="domainDeny">Our JetStream domain's API subject kept from the hub (<see cref="DomainDeny"/>), or null.</param>
    public static LeafPermissions Create(LeafRemoteOptions remote, bool systemAccount, LeafInfo.SubjectPermission? import = null, LeafInfo.SubjectPermission? export = null, string? domainDeny = null)
    {
        var js = systemAccount ? SystemJetStream : ClientJetStream;
        string[] outgoing = domainDeny is null ? [] : [domainDeny];
        return new LeafPermissions(
            Allow(import),
            SubjectPatternSet.Create([.. import?.Deny ?? [], .. remote.DenyImports, .. js], allowQueue: false),
            Allow(export),
            SubjectPatternSet.Create([.. export?.Deny ?? [], .. remote.DenyExports, .. js, .. outgoing], allowQueue: false));
    }

    /// <summary>
    /// The permissions of a link this broker accepted as the hub, from the leaf user's: nats-server reverses them
    /// (<c>processLeafNodeConnect</c>), so what the hub sends the spoke (messages, and the spoke's interest it takes)
    /// follows the user's <c>subscribe</c> with the spoke's <c>deny_pub</c> and <paramref name="domainDeny"/> added,
    /// and the interest the hub sends follows the user's <c>publish</c>.
    /// </summary>
    public static LeafPermissions ForSpoke(LeafInfo.SubjectPermission? publish, LeafInfo.SubjectPermission? subscribe, IList<string>? spokeDenies, bool systemAccount, string? domainDeny = null)
    {
        var js = systemAccount ? SystemJetStream : ClientJetStream;
        string[] outgoing = domainDeny is null ? [] : [domainDeny];
        return new LeafPermissions(
            Allow(publish),
            SubjectPatternSet.Create([.. publish?.Deny ?? [], .. js], allowQueue: false),
            Allow(subscribe),
            SubjectPatternSet.Create([.. subscribe?.Deny ?? [], .. spokeDenies ?? [], .. js, .. outgoing], allowQueue: false));
    }

    /// <summary>
    /// A route's permissions (nats-server's <c>setRoutePermissions</c>): <c>import</c> is its publish side (which
    /// interest the broker sends: <see cref="CanPublish"/>, <c>canImport</c>), <c>export</c> its subscribe side (which
    /// member interest the broker takes: <see cref="CanSubscribe"/>, <c>canExport</c>; messages on a denied subject are
    /// not sent: <see cref="DeniesDelivery"/>); null when the cluster has neither.
    /// </summary>
    public static LeafPermissions? ForRoute(LeafInfo.SubjectPermission? import, LeafInfo.SubjectPermission? export)
        => import is null && export is null ? null : new LeafPermissions(
            Allow(export),
            SubjectPatternSet.Create(export?.Deny ?? [], allowQueue: false),
            Allow(import),
            SubjectPatternSet.Create(import?.Deny ?? [], allowQueue: false));

    /// <summary>
    /// nats-server's <c>blockMappingOutgoing</c> (<c>addLeafNodeConnection</c>): a server serving JetStream domain
    /// <paramref name="ours"/> keeps requests for it (<c>$JS.&lt;ours&gt;.API.&gt;</c>) from crossing a link of a
    /// non-system account to a server of another domain (the hub's, or the spoke's on a link the broker accepted), so a hub
    /// and a spoke never both answer one; null when nothing is denied.
    /// </summary>
    public static string? DomainDeny(string? ours, string? theirs, bool systemAccount)
        => string.IsNullOrEmpty(ours) || systemAccount || string.Equals(ours, theirs ?? string.Empty, StringComparison.Ordinal) ? null : "$JS." + ours + ".API.>";

    private static SubjectPatternSet? Allow(LeafInfo.SubjectPermission? permission)
        => permission?.Allow is { Count: > 0 } allow ? SubjectPatternSet.Create(allow, allowQueue: false) : null;

    /// <summary>Whether interest in <paramref name="subject"/> may be sent to the hub (nats-server's <c>canSubscribe</c>).</summary>
    public bool CanSubscribe(ReadOnlySpan<byte> subject)
    {
        if (subscribeAllow is not null && !subscribeAllow.MatchesPlain(subject, SubjectPatternSet.Mode.Tokens))
        {
            return false;
        }

        return subscribeDeny.IsEmpty || !subscribeDeny.MatchesPlain(subject, SubjectPatternSet.Mode.Tokens);
    }

    /// <summary>Whether a message on <paramref name="subject"/> is kept from the link by a subscribe deny (nats-server's <c>checkDenySub</c>).</summary>
    public bool DeniesDelivery(ReadOnlySpan<byte> subject) => !subscribeDeny.IsEmpty && subscribeDeny.MatchesPlain(subject, SubjectPatternSet.Mode.Tokens);

    /// <summary>Whether a message on <paramref name="subject"/> (or the hub's interest in it) may cross to the hub (nats-server's <c>pubAllowed</c>).</summary>
    public bool CanPublish(ReadOnlySpan<byte> subject)
    {
        if (publishAllow is not null && !publishAllow.MatchesPlain(subject, SubjectPatternSet.Mode.Tokens))
        {
            return false;
        }

        return publishDeny.IsEmpty || !publishDeny.MatchesPlain(subject, SubjectPatternSet.Mode.Tokens);
    }
}
