using System.Reflection;
using System.Runtime.CompilerServices;
using Broker.Abstractions;

namespace Broker.Core.Tests.Api;

/// <summary>
/// The public surface of the contract (and of the core's embedding API) is checked in as PublicAPI.txt beside each
/// project. A change fails this test until the file is updated in the same commit, so no contract change is accidental.
/// On failure the new surface is written beside it as PublicAPI.received.txt to review and copy over.
/// </summary>
public sealed class PublicApiTests
{
    [Fact]
    public void Contract_surface_is_the_reviewed_one() => Verify(typeof(IBrokerPlugin).Assembly, "abstractions/Broker.Abstractions");

    [Fact]
    public void Core_embedding_surface_is_the_reviewed_one() => Verify(typeof(BrokerServer).Assembly, "core/Broker.Core");

    private static void Verify(Assembly assembly, string projectFolder, [CallerFilePath] string thisFile = "")
    {
        var root = Path.GetFullPath(Path.Combine(Path.GetDirectoryName(thisFile)!, "..", "..", ".."));
        var approved = Path.Combine(root, projectFolder, "PublicAPI.txt");
        var received = Path.Combine(root, projectFolder, "PublicAPI.received.txt");
        var actual = PublicApiPrinter.Print(assembly);
        var expected = File.Exists(approved) ? File.ReadAllText(approved).ReplaceLineEndings("\n") : string.Empty;
        if (actual == expected)
        {
            File.Delete(received);
            return;
        }

        File.WriteAllText(received, actual);
        var added = actual.Split('\n').Except(expected.Split('\n')).Take(20);
        var removed = expected.Split('\n').Except(actual.Split('\n')).Take(20);
        Assert.Fail($"The public API of {assembly.GetName().Name} changed. Review {received} and copy it to {approved}.\n"
            + "Added:\n  " + string.Join("\n  ", added) + "\nRemoved:\n  " + string.Join("\n  ", removed));
    }
}
