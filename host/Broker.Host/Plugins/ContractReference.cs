using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;

namespace Broker.Host.Plugins;

/// <summary>
/// Reads which version of the contract (<c>Broker.Abstractions</c>) an assembly was compiled against from its
/// metadata, without loading it: loading a plugin built against a newer contract would fail with a type-load error
/// deep inside the plugin instead of a clear refusal.
/// </summary>
internal static class ContractReference
{
    /// <summary>The <c>major.minor</c> of the referenced <c>Broker.Abstractions</c>, or <see langword="null"/> when there is no reference.</summary>
    /// <param name="assemblyPath">The assembly file.</param>
    /// <returns>The referenced contract version.</returns>
    /// <exception cref="BadImageFormatException">The file is not a .NET assembly.</exception>
    /// <exception cref="IOException">The file cannot be read.</exception>
    public static Version? Read(string assemblyPath)
    {
        using var stream = File.OpenRead(assemblyPath);
        using var pe = new PEReader(stream);
        if (!pe.HasMetadata)
        {
            throw new BadImageFormatException("the file has no .NET metadata");
        }

        var metadata = pe.GetMetadataReader();
        if (!metadata.IsAssembly)
        {
            throw new BadImageFormatException("the file is a module, not an assembly");
        }

        var contractName = typeof(Abstractions.BrokerContract).Assembly.GetName().Name!;
        foreach (var handle in metadata.AssemblyReferences)
        {
            var reference = metadata.GetAssemblyReference(handle);
            if (metadata.StringComparer.Equals(reference.Name, contractName))
            {
                return new Version(reference.Version.Major, reference.Version.Minor);
            }
        }

        return null;
    }
}
