using Broker.Core.Internal.Accounts;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Subject mappings on the publish path (nats-server maps in the parser, before the permission check and the match):
/// a publish of a client whose account has mappings is routed and delivered with the mapped subject, written into
/// this producer's own buffer. Publishes of an account without mappings pay the null check in the caller.
/// </summary>
internal abstract partial class ClientBase
{
    /// <summary>The subject a publish to <paramref name="subject"/> goes to under <paramref name="mappings"/>; valid until this producer's next publish.</summary>
    protected ReadOnlySpan<byte> MapSubject(SubjectMapper mappings, ReadOnlySpan<byte> subject)
        => mappings.Map(subject, Producer.MappingScratch ??= new MappingScratch());
}
