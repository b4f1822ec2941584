using System.Text;
using Broker.Abstractions;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// One stream import of an account (nats-server's <c>streamImport</c>): messages published in <see cref="Exporter"/> on
/// <see cref="From"/> reach the importing account's subscribers of <see cref="To"/>. A subscription in the importer
/// that matches <see cref="To"/> gets shadow subscriptions in the exporter's index (<see cref="ShadowSubject"/>);
/// a delivery through one writes <see cref="DeliverySubject"/>.
/// </summary>
internal sealed class StreamImport
{
    private readonly byte[] toBytes;
    private readonly ImportTransform? transform;
    private ImportTransform? reverse;

    /// <param name="exporter">The exporting account.</param>
    /// <param name="from">The subject imported, in the exporter.</param>
    /// <param name="to">The subject in the importer (the prefix applied already).</param>
    public StreamImport(Account exporter, string from, string to)
    {
        Exporter = exporter;
        From = from;
        To = to;
        toBytes = Encoding.UTF8.GetBytes(to);
        if (Subjects.HasWildcard(Encoding.UTF8.GetBytes(from)))
        {
            if (to == from)
            {
                UsesPublished = true;
            }
            else
            {
                transform = ImportTransform.Create(from, to);
            }
        }
    }

    public Account Exporter { get; }

    public string From { get; }

    public string To { get; }

    /// <summary>
    /// <see cref="To"/> as /accountz shows it (<c>local_subject</c>): each <c>$N</c> or <c>{{wildcard(N)}}</c> as
    /// <c>*</c>, as nats-server keeps the import's subject.
    /// </summary>
    public string LocalSubject => string.Join('.', To.Split('.').Select(t => t.StartsWith('$') || t.StartsWith("{{", StringComparison.Ordinal) ? "*" : t));

    /// <summary>The published subject is delivered as it is (a wildcard import without a prefix or <c>to</c>).</summary>
    public bool UsesPublished { get; }

    /// <summary>
    /// The subject a message published on <paramref name="published"/> is delivered under in the importer; written into
    /// <paramref name="scratch"/> (the producer's, grown when too small) when it must be built. Allocates nothing.
    /// </summary>
    public ReadOnlySpan<byte> DeliverySubject(ReadOnlySpan<byte> published, ref byte[] scratch)
    {
        if (transform is not null)
        {
            var length = transform.Apply(published, ref scratch);
            return scratch.AsSpan(0, length);
        }

        return UsesPublished ? published : toBytes;
    }

    /// <summary>
    /// The subject of the shadow subscription in the exporter for a subscription of the importer on
    /// <paramref name="subject"/> (nats-server's <c>addShadowSub</c>).
    /// </summary>
    /// <param name="subject">The importer's subscription subject.</param>
    /// <param name="overlap">The narrowed subject when the subscription only overlaps <see cref="To"/>.</param>
    /// <param name="dynamic">Whether the subject is narrower than <see cref="To"/> (so it must be mapped back).</param>
    public string ShadowSubject(string subject, string? overlap, bool dynamic)
    {
        if (!UsesPublished && dynamic && transform is not null)
        {
            reverse ??= transform.Reverse();
            return reverse.Apply(overlap ?? subject);
        }

        if (!UsesPublished || overlap is not null || !dynamic)
        {
            return overlap ?? From;
        }

        return subject;
    }
}
