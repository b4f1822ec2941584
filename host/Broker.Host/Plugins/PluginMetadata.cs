using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using Broker.Abstractions;

namespace Broker.Host.Plugins;

/// <summary>
/// What a plugin's main assembly declares, read from its metadata without loading it: the contract version it was
/// compiled against and its <see cref="BrokerPluginAttribute"/>. Discovery needs nothing more (the manifest, the
/// configuration blocks it claims, whether the configuration uses it), so a plugin the configuration does not use never
/// gets a load context (docs/benchmarks.md, "hoststart").
/// </summary>
/// <param name="ReferencedContract">The <c>major.minor</c> of the referenced <c>Broker.Abstractions</c>, or <see langword="null"/> when there is none.</param>
/// <param name="Attribute">The attribute's arguments, or <see langword="null"/> when the assembly carries none.</param>
internal sealed record PluginMetadata(Version? ReferencedContract, PluginDeclaration? Attribute)
{
    private static readonly string ContractName = typeof(BrokerContract).Assembly.GetName().Name!;

    /// <summary>Reads an assembly file's metadata.</summary>
    /// <param name="assemblyPath">The assembly file.</param>
    /// <returns>What it declares.</returns>
    /// <exception cref="BadImageFormatException">The file is not a .NET assembly, or the attribute's blob is malformed.</exception>
    /// <exception cref="IOException">The file cannot be read.</exception>
    public static PluginMetadata Read(string assemblyPath)
    {
        // The headers and the metadata are read into memory: without PrefetchMetadata the reader maps a file stream of
        // more than 16 KB, which loads System.IO.MemoryMappedFiles at every start for this alone (docs/benchmarks.md,
        // "start7"); discovery reads nothing of the image but its metadata.
        using var stream = File.OpenRead(assemblyPath);
        using var pe = new PEReader(stream, PEStreamOptions.PrefetchMetadata);
        if (!pe.HasMetadata)
        {
            throw new BadImageFormatException("the file has no .NET metadata");
        }

        var metadata = pe.GetMetadataReader();
        if (!metadata.IsAssembly)
        {
            throw new BadImageFormatException("the file is a module, not an assembly");
        }

        return new PluginMetadata(ReadContract(metadata), ReadAttribute(metadata));
    }

    private static Version? ReadContract(MetadataReader metadata)
    {
        foreach (var handle in metadata.AssemblyReferences)
        {
            var reference = metadata.GetAssemblyReference(handle);
            if (metadata.StringComparer.Equals(reference.Name, ContractName))
            {
                return new Version(reference.Version.Major, reference.Version.Minor);
            }
        }

        return null;
    }

    private static PluginDeclaration? ReadAttribute(MetadataReader metadata)
    {
        var assembly = metadata.GetAssemblyDefinition();
        foreach (var handle in assembly.GetCustomAttributes())
        {
            var attribute = metadata.GetCustomAttribute(handle);
            if (!IsPluginAttribute(metadata, attribute.Constructor))
            {
                continue;
            }

            var value = attribute.DecodeValue(TypeNames.Instance);
            var declaration = new PluginDeclaration(
                metadata.GetString(assembly.Name),
                assembly.Version,
                value.FixedArguments.Length == 1 ? value.FixedArguments[0].Value as string : null);
            foreach (var named in value.NamedArguments)
            {
                declaration = named.Name switch
                {
                    nameof(BrokerPluginAttribute.Id) => declaration with { Id = named.Value as string },
                    nameof(BrokerPluginAttribute.Version) => declaration with { Version = named.Value as string },
                    nameof(BrokerPluginAttribute.MinimumContractVersion) => declaration with { MinimumContractVersion = named.Value as string },
                    nameof(BrokerPluginAttribute.ConfigurationAliases) => declaration with { ConfigurationAliases = Strings(named.Value) },
                    nameof(BrokerPluginAttribute.ConfigurationKeys) => declaration with { ConfigurationKeys = Strings(named.Value) },
                    nameof(BrokerPluginAttribute.ActivationKeys) => declaration with { ActivationKeys = Strings(named.Value) },
                    _ => declaration,
                };
            }

            return declaration;
        }

        return null;
    }

    // The contract's own attribute type, referenced from the contract assembly (a plugin cannot define it).
    private static bool IsPluginAttribute(MetadataReader metadata, EntityHandle constructor)
    {
        if (constructor.Kind != HandleKind.MemberReference)
        {
            return false;
        }

        var parent = metadata.GetMemberReference((MemberReferenceHandle)constructor).Parent;
        if (parent.Kind != HandleKind.TypeReference)
        {
            return false;
        }

        var type = metadata.GetTypeReference((TypeReferenceHandle)parent);
        return metadata.StringComparer.Equals(type.Name, nameof(BrokerPluginAttribute))
            && metadata.StringComparer.Equals(type.Namespace, typeof(BrokerPluginAttribute).Namespace!)
            && type.ResolutionScope.Kind == HandleKind.AssemblyReference
            && metadata.StringComparer.Equals(metadata.GetAssemblyReference((AssemblyReferenceHandle)type.ResolutionScope).Name, ContractName);
    }

    // A string[] argument: null, or its items (a null item becomes empty, which is refused as a key later).
    private static string[]? Strings(object? value)
    {
        if (value is not ImmutableArray<CustomAttributeTypedArgument<string>> items)
        {
            return null;
        }

        var strings = new string[items.Length];
        for (var i = 0; i < strings.Length; i++)
        {
            strings[i] = items[i].Value as string ?? "";
        }

        return strings;
    }

    // Attribute arguments' types by name: the attribute has strings, string arrays and one Type (its startup type,
    // which arrives as the serialized type name).
    private sealed class TypeNames : ICustomAttributeTypeProvider<string>
    {
        public static readonly TypeNames Instance = new();

        // Only System.String matters here; naming the others by number spares Enum.ToString's sorted name table.
        public string GetPrimitiveType(PrimitiveTypeCode typeCode) =>
            typeCode == PrimitiveTypeCode.String ? "System.String" : "primitive " + (int)typeCode;

        public string GetSystemType() => "System.Type";

        public string GetSZArrayType(string elementType) => elementType + "[]";

        // Full names, so that the constructor's System.Type parameter is recognised (IsSystemType).
        public string GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind)
        {
            var type = reader.GetTypeDefinition(handle);
            return reader.GetString(type.Namespace) + "." + reader.GetString(type.Name);
        }

        public string GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind)
        {
            var type = reader.GetTypeReference(handle);
            return reader.GetString(type.Namespace) + "." + reader.GetString(type.Name);
        }

        public string GetTypeFromSerializedName(string name) => name;

        public PrimitiveTypeCode GetUnderlyingEnumType(string type) =>
            throw new BadImageFormatException($"BrokerPluginAttribute has no enum argument ({type})");

        public bool IsSystemType(string type) => type == "System.Type";
    }
}

/// <summary>The arguments of a plugin's <see cref="BrokerPluginAttribute"/>, as written (defaults not applied).</summary>
/// <param name="AssemblyName">The assembly's simple name (the default id).</param>
/// <param name="AssemblyVersion">The assembly version (the default plugin version).</param>
/// <param name="StartupType">The startup type's serialized name.</param>
internal sealed record PluginDeclaration(string AssemblyName, Version AssemblyVersion, string? StartupType)
{
    /// <summary><see cref="BrokerPluginAttribute.Id"/>.</summary>
    public string? Id { get; init; }

    /// <summary><see cref="BrokerPluginAttribute.Version"/>.</summary>
    public string? Version { get; init; }

    /// <summary><see cref="BrokerPluginAttribute.MinimumContractVersion"/>.</summary>
    public string? MinimumContractVersion { get; init; }

    /// <summary><see cref="BrokerPluginAttribute.ConfigurationAliases"/>.</summary>
    public IReadOnlyList<string>? ConfigurationAliases { get; init; }

    /// <summary><see cref="BrokerPluginAttribute.ConfigurationKeys"/>.</summary>
    public IReadOnlyList<string>? ConfigurationKeys { get; init; }

    /// <summary><see cref="BrokerPluginAttribute.ActivationKeys"/>.</summary>
    public IReadOnlyList<string>? ActivationKeys { get; init; }

    /// <summary>
    /// The manifest with defaults filled in, as <c>PluginManifests.Read</c> fills them from the loaded assembly: the id
    /// defaults to the assembly name, the version to the assembly version, the minimum contract to the referenced one.
    /// </summary>
    /// <param name="referencedContract">The contract the assembly was compiled against.</param>
    /// <returns>The manifest.</returns>
    /// <exception cref="FormatException">A version in the attribute is not a valid version.</exception>
    /// <exception cref="ArgumentException">A version in the attribute is not a valid version.</exception>
    public PluginManifest ToManifest(Version referencedContract) => new(
        string.IsNullOrWhiteSpace(Id) ? AssemblyName : Id,
        Version is null ? AssemblyVersion : System.Version.Parse(Version),
        MinimumContractVersion is null ? referencedContract : System.Version.Parse(MinimumContractVersion));
}
