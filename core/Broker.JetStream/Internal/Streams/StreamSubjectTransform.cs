using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Accounts;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// A stream's subject transform (its <c>subject_transform</c>, or the destination of its <c>republish</c>), as
/// nats-server's <c>transform.Match</c>: a subject within the source is rewritten into this object's own buffer, any
/// other is left alone. Used only by the stream's ingest, one message at a time, so the buffer needs no lock and
/// allocates nothing after it has grown to fit.
/// </summary>
internal sealed class StreamSubjectTransform
{
    private readonly SubjectTransform transform;
    private readonly byte[]? source;
    private readonly MappingScratch scratch = new();

    private StreamSubjectTransform(SubjectTransform transform)
    {
        this.transform = transform;
        source = transform.Source == ">" ? null : Encoding.UTF8.GetBytes(transform.Source);
    }

    /// <summary>Compiles a transform; throws <see cref="InvalidOperationException"/> with nats-server's text when it refuses it.</summary>
    public static StreamSubjectTransform Create(string source, string destination) => new(SubjectTransform.Create(source, destination));

    /// <summary>
    /// Writes the subject <paramref name="subject"/> becomes when it is within the source; the result is valid until the
    /// next call.
    /// </summary>
    public bool TryApply(ReadOnlySpan<byte> subject, out ReadOnlySpan<byte> transformed)
    {
        if (source is not null && !Subjects.IsSubsetOf(subject, source))
        {
            transformed = default;
            return false;
        }

        scratch.Reset();
        transform.Apply(subject, scratch.Tokenize(subject), scratch);
        transformed = scratch.Written;
        return true;
    }
}
